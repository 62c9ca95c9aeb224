package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// config holds the world's sizes. The defaults are the shipped set's.
type config struct {
	Seed         uint64
	People       int // persons around the user
	Projects     int
	Tools        int
	UserTopics   int // attribute topics of the user
	Topics       int // attribute topics of every other entity
	UserEpisodes int // one-off event memories about the user
	EpisodesMin  int // one-off event memories of every other entity, uniform in [min, max]
	EpisodesMax  int
	Queries      int // answerable queries (one per chosen topic)
	Unanswerable int // queries about attributes that have no memory
	Popular      int // popular distractors
	Limit        int // the queries' limit
	Dim          int
	Now          time.Time // the instant the queries are asked
}

func defaultConfig() config {
	return config{
		Seed: 1, People: 19, Projects: 12, Tools: 8, UserTopics: 12, Topics: 6,
		UserEpisodes: 80, EpisodesMin: 16, EpisodesMax: 32,
		Queries: 115, Unanswerable: 15, Popular: 40, Limit: 10, Dim: 128,
		Now: time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC),
	}
}

// storeAge is the age in days of the oldest memory: the store was started
// about 25 months before config.Now (most activity is in the last 18 months,
// but outdated values and stale answers go back to 700 days).
const storeAge = 760.0

// Per-topic structure (the specified numbers; arbitrary where the specification is
// silent, see the README).
const (
	pOutdated        = 0.40 // a topic has one outdated earlier value
	pOutdatedMarked  = 0.50 // ... marked superseded
	pSpeculation     = 0.30 // a topic has an on-topic speculation
	pSpecCorrect     = 0.30 // ... which happens to be correct
	pStale           = 0.20 // the answer is 300-700 days old, nothing newer
	pCopy            = 0.10 // a duplicate is an exact textual copy
	pLoose           = 0.15 // a duplicate is a looser paraphrase (0.86-0.92)
	pPopularIsAnswer = 0.60 // a popular distractor is its topic's answer (else a detail)
	userPopularBias  = 3.0  // the user's topics are this much likelier to hold a popular memory
)

// Internal relation of a memory to its own topic (finer than role).
const (
	subAnswer      = "answer"
	subDup         = "paraphrase"
	subDupLoose    = "loose paraphrase"
	subDupCopy     = "exact copy"
	subOutdated    = "outdated"
	subSuperseded  = "superseded"
	subDetail      = "detail"
	subSpeculation = "speculation"
	subEpisode     = "episode"
)

type topic struct {
	id           string
	ent          *entity
	entIdx       int
	kind         *kind // nil for episodes
	episode      bool
	unanswerable bool
	stale        bool
	popular      bool
	queried      bool
	mems         []*mem
	// value strings: answer, outdated, wrong speculation
	values [3]string
	// latent directions (buildVectors)
	dirT, dirS []float64
	dirV       [3][]float64
	queryVec   []float64
}

type mem struct {
	id      uint64
	t       *topic
	sub     string
	role    string
	fact    string
	correct bool
	grade   int
	popular bool
	text    string
	norm    string
	p       payload
	vec     []float64
	super   *mem // the superseding answer, for superseded memories
	// vector recipe
	valueSlot int     // which value direction (0 answer, 1 outdated, 2 wrong speculation)
	tau       float64 // target cosine to the answer, for duplicates
	base      *mem    // the answer, for duplicates
}

type query struct {
	id       string
	t        *topic
	vec      []float64
	relevant map[string]int
}

type dataset struct {
	cfg      config
	entities []*entity
	topics   []*topic // attribute, then unanswerable, then episode topics, in id order
	mems     []*mem   // by id
	queries  []*query
}

// generate builds the whole set for cfg. It is deterministic: two world
// streams of one PCG seed, slices only (no map is ever iterated).
func generate(cfg config) (*dataset, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	d := &dataset{cfg: cfg}
	wr := newRNG(cfg.Seed, 0x6d656d72616e6b01) // world, texts and metadata
	vr := newRNG(cfg.Seed, 0x6d656d72616e6b02) // vectors
	d.buildEntities(wr)
	d.buildTopics(wr)
	d.buildMemories(wr)
	d.assignIDs(wr)
	d.buildVectors(vr)
	d.buildQueries()
	return d, nil
}

func (c config) validate() error {
	switch {
	case c.People < 1 || c.People > len(personNames):
		return fmt.Errorf("people must be in 1..%d", len(personNames))
	case c.Projects < 1 || c.Projects > len(projectNames):
		return fmt.Errorf("projects must be in 1..%d", len(projectNames))
	case c.Tools < 1 || c.Tools > len(toolNames):
		return fmt.Errorf("tools must be in 1..%d", len(toolNames))
	case c.Topics < 1 || c.UserTopics < 1:
		return fmt.Errorf("topics per entity must be positive")
	case c.EpisodesMin < 0 || c.EpisodesMax < c.EpisodesMin || c.UserEpisodes < 0:
		return fmt.Errorf("bad episode counts")
	case c.Limit < 1:
		return fmt.Errorf("limit must be positive")
	case c.Dim < 2*(2+c.People+c.Projects+c.Tools):
		return fmt.Errorf("dim %d is too small for %d entities", c.Dim, 1+c.People+c.Projects+c.Tools)
	}
	for _, cl := range []class{classUser, classPerson, classProject, classTool} {
		n := len(kindsOf(cl))
		want := c.Topics
		if cl == classUser {
			want = c.UserTopics
		}
		if want > n {
			return fmt.Errorf("%d topics per entity but only %d kinds for class %d", want, n, cl)
		}
	}
	total := c.UserTopics + (c.People+c.Projects+c.Tools)*c.Topics
	if c.Queries < 0 || c.Queries > total {
		return fmt.Errorf("queries must be in 0..%d", total)
	}
	if c.Popular < 0 || c.Popular > total {
		return fmt.Errorf("popular must be in 0..%d", total)
	}
	if c.Unanswerable < 0 || c.Unanswerable > 1+c.People+c.Projects+c.Tools {
		return fmt.Errorf("unanswerable must be at most the number of entities")
	}
	return nil
}

func kindsOf(cl class) []*kind {
	var out []*kind
	for _, k := range kinds {
		if k.classes&cl != 0 {
			out = append(out, k)
		}
	}
	return out
}

func (d *dataset) buildEntities(r *rng) {
	add := func(cl class, name, poss, handle, tag string) {
		d.entities = append(d.entities, &entity{
			key: "e" + pad(len(d.entities), 2), class: cl, name: name, poss: poss, handle: handle, tag: tag,
		})
	}
	add(classUser, "the user", "the user's", "jordan", "user")
	for _, i := range r.sample(len(personNames), d.cfg.People) {
		n := personNames[i]
		add(classPerson, n, n+"'s", strings.ToLower(n)+"."+strings.ToLower(surnames[r.intn(len(surnames))]), n)
	}
	for _, i := range r.sample(len(projectNames), d.cfg.Projects) {
		n := "Project " + projectNames[i]
		add(classProject, n, n+"'s", strings.ToLower(projectNames[i]), n)
	}
	for _, i := range r.sample(len(toolNames), d.cfg.Tools) {
		n := toolNames[i]
		add(classTool, n, n+"'s", strings.ToLower(n), n)
	}
}

func (d *dataset) newTopic(e *entity, ei int, k *kind) *topic {
	t := &topic{id: "t" + pad(len(d.topics)+1, 4), ent: e, entIdx: ei, kind: k}
	d.topics = append(d.topics, t)
	return t
}

func (d *dataset) buildTopics(r *rng) {
	// Attribute topics: each entity gets distinct kinds of its class.
	used := make([][]*kind, len(d.entities))
	var attr []*topic
	for ei, e := range d.entities {
		ks := kindsOf(e.class)
		n := d.cfg.Topics
		if e.class == classUser {
			n = d.cfg.UserTopics
		}
		idx := r.sample(len(ks), n)
		slices.Sort(idx) // topics of an entity in kind order
		for _, i := range idx {
			t := d.newTopic(e, ei, ks[i])
			t.stale = r.chance(pStale)
			used[ei] = append(used[ei], ks[i])
			attr = append(attr, t)
		}
	}
	// Unanswerable topics: an attribute of an entity that no memory states.
	ents := r.sample(len(d.entities), d.cfg.Unanswerable)
	slices.Sort(ents)
	for _, ei := range ents {
		e := d.entities[ei]
		var free []*kind
		for _, k := range kindsOf(e.class) {
			if !slices.Contains(used[ei], k) {
				free = append(free, k)
			}
		}
		t := d.newTopic(e, ei, free[r.intn(len(free))])
		t.unanswerable = true
		t.queried = true
	}
	// Episodes: one-off events, one topic each.
	for ei, e := range d.entities {
		n := d.cfg.UserEpisodes
		if e.class != classUser {
			n = r.between(d.cfg.EpisodesMin, d.cfg.EpisodesMax)
		}
		for range n {
			t := d.newTopic(e, ei, nil)
			t.episode = true
		}
	}
	d.choosePopular(r, attr)
	d.chooseQueried(r, attr)
}

// choosePopular picks the topics that hold a popular distractor: non-stale
// attribute topics, the user's weighted userPopularBias times the others'.
func (d *dataset) choosePopular(r *rng, attr []*topic) {
	var pool []*topic
	var w []float64
	for _, t := range attr {
		if !t.stale {
			pool = append(pool, t)
			if t.ent.class == classUser {
				w = append(w, userPopularBias)
			} else {
				w = append(w, 1)
			}
		}
	}
	for i := 0; i < d.cfg.Popular && len(pool) > 0; i++ {
		j := r.pick(w...)
		pool[j].popular = true
		pool = slices.Delete(pool, j, j+1)
		w = slices.Delete(w, j, j+1)
	}
}

// chooseQueried picks the answerable queries' topics: topics grouped by kind,
// each group shuffled, taken round-robin over the kinds so that every kind is
// represented. Staleness, outdated values and popularity play no part.
func (d *dataset) chooseQueried(r *rng, attr []*topic) {
	var groups [][]*topic
	for _, k := range kinds {
		var g []*topic
		for _, t := range attr {
			if t.kind == k {
				g = append(g, t)
			}
		}
		if len(g) == 0 {
			continue
		}
		p := r.perm(len(g))
		sh := make([]*topic, len(g))
		for i, j := range p {
			sh[i] = g[j]
		}
		groups = append(groups, sh)
	}
	// The kinds' order of taking is shuffled too, so that the last round
	// does not always favour the kinds listed first.
	order := r.perm(len(groups))
	left := d.cfg.Queries
	for round := 0; left > 0; round++ {
		for _, gi := range order {
			if left == 0 {
				break
			}
			if round < len(groups[gi]) {
				groups[gi][round].queried = true
				left--
			}
		}
	}
}

// ---- memories ----

var (
	models       = []string{"claude-3-5-sonnet", "gpt-4o", "claude-3-haiku", "gpt-3.5-turbo", "unknown-extractor"}
	modelQuality = []float64{0.90, 0.85, 0.80, 0.65, 0.65}
	sources      = []string{"direct", "confirmed", "strong_inference", "weak_inference", "speculation"}
	sourceLevel  = []float64{0.95, 0.80, 0.70, 0.50, 0.30}
	typePrior    = map[string]float64{"entity": 0.90, "event": 0.85, "fact": 0.80, "preference": 0.75, "relation": 0.70}
	groundings   = []string{"supported", "partial", "unknown"}
	groundingPen = []float64{0, 0.15, 0.10}
)

// profile is the metadata distribution of one kind of memory.
type profile struct {
	source    []float64 // weights over sources
	model     []float64 // weights over models
	grounding []float64 // weights over groundings
}

var (
	profAnswer   = profile{[]float64{50, 15, 25, 10, 0}, []float64{30, 35, 15, 12, 8}, []float64{70, 10, 20}}
	profOutdated = profile{[]float64{55, 15, 22, 8, 0}, []float64{30, 35, 15, 12, 8}, []float64{70, 10, 20}}
	profDup      = profile{[]float64{15, 5, 45, 35, 0}, []float64{20, 30, 25, 15, 10}, []float64{60, 15, 25}}
	profDetail   = profile{[]float64{35, 5, 35, 25, 0}, []float64{30, 35, 15, 12, 8}, []float64{70, 10, 20}}
	profSpec     = profile{[]float64{0, 0, 0, 40, 60}, []float64{5, 10, 25, 35, 25}, []float64{20, 40, 40}}
	profEpisode  = profile{[]float64{60, 0, 30, 10, 0}, []float64{30, 35, 15, 12, 8}, []float64{75, 10, 15}}
	profPopular  = profile{[]float64{70, 30, 0, 0, 0}, []float64{50, 50, 0, 0, 0}, []float64{100, 0, 0}}
)

// life is a memory's history in ages (days before config.Now).
type life struct {
	created, observed float64 // observed <= created
	n                 int     // re-observations after the first
	accesses          int
	accessed          float64 // age of the last access, when accesses > 0
}

type payload struct {
	Text           string         `json:"text"`
	MemoryType     string         `json:"memory_type"`
	Source         string         `json:"source"`
	ExtractorModel string         `json:"extractor_model"`
	Grounding      string         `json:"grounding"`
	Observations   int            `json:"observations"`
	Confidence     f4             `json:"confidence"`
	DecayCategory  string         `json:"decay_category,omitempty"`
	CreatedAt      string         `json:"created_at"`
	LastObservedAt string         `json:"last_observed_at"`
	LastAccessedAt string         `json:"last_accessed_at,omitempty"`
	AccessCounts   map[string]int `json:"access_counts"`
	SessionIDs     []string       `json:"session_ids"`
	TurnIDs        []string       `json:"turn_ids"`
	Entities       []string       `json:"entities"`
	Retrievable    bool           `json:"retrievable"`
	Tier           string         `json:"tier"`
	SupersededBy   string         `json:"superseded_by,omitempty"`
	Schema         int            `json:"memrank_schema"`
}

// confidence is memrank's write-time confidence: min(1, .45 s + .20 r(n) +
// .25 e + .10 t), then the grounding penalty max(conf - p, min(conf, .30)).
func confidence(s float64, n int, e, t, pen float64) float64 {
	r := 0.0
	if n > 0 {
		r = 1 - 1/(1+math.Log1p(float64(n)))
	}
	c := math.Min(1, 0.45*s+0.20*r+0.25*e+0.10*t)
	return math.Max(c-pen, math.Min(c, 0.30))
}

// ageTime is the instant age days before the set's Now.
func (d *dataset) ageTime(age float64) time.Time {
	return d.cfg.Now.Add(-time.Duration(math.Round(age*86400)) * time.Second)
}

func (d *dataset) stamp(age float64) string { return d.ageTime(age).Format(time.RFC3339) }

// sessionEpoch is older than any memory (an outdated value may have been
// last observed up to 30 days before a store-old answer).
const sessionEpoch = storeAge + 40

// session numbers the chat sessions: about three a day.
func session(age float64) string {
	return "s" + pad(int((sessionEpoch-age)*3)+1, 4)
}

func roundCount(x float64) int { return int(math.Round(x)) }

// observations draws n from weighted ranges [lo, hi].
func observations(r *rng, ranges ...[3]float64) int {
	w := make([]float64, len(ranges))
	for i, rg := range ranges {
		w[i] = rg[2]
	}
	rg := ranges[r.pick(w...)]
	return r.between(int(rg[0]), int(rg[1]))
}

// spanBack is the age of a first observation n re-observations before an
// observation at age observed: observed itself when n is 0.
func spanBack(r *rng, observed float64, n int, lo, hi float64) float64 {
	if n == 0 {
		return observed
	}
	return math.Max(observed, math.Min(observed+r.logUniform(lo, hi), math.Max(storeAge, observed)))
}

// lastAccess is the age of the last access of a live memory: some time since
// it was written, biased towards recent reads.
func lastAccess(r *rng, created float64) float64 {
	u := r.float()
	return created * u * u
}

func (d *dataset) buildMemories(r *rng) {
	taken := map[string]string{} // normalised text -> fact (look-ups only)
	for _, t := range d.topics {
		switch {
		case t.unanswerable:
			continue
		case t.episode:
			d.episode(r, t, taken)
		default:
			d.attributeTopic(r, t, taken)
		}
	}
}

// fill writes a template; capitalises the first letter.
func fill(tpl string, e *entity, v, dw, month string) string {
	s := strings.NewReplacer("{Es}", e.poss, "{E}", e.name, "{V}", v, "{D}", dw, "{M}", month).Replace(tpl)
	return strings.ToUpper(s[:1]) + s[1:]
}

// normalize mirrors memrank's tier-1 text normaliser for ASCII text: lower
// case, apostrophes dropped, every other non-alphanumeric run one space.
func normalize(s string) string {
	var b strings.Builder
	space := false
	for _, c := range strings.ToLower(s) {
		switch {
		case c == '\'':
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c >= 0x80:
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(c)
		default:
			space = true
		}
	}
	return b.String()
}

// setText gives m its text, keeping normalised texts unique across facts:
// only an exact copy may share its answer's normalised text. A collision
// (rare: two templates that normalise alike) gets a dated suffix.
func (d *dataset) setText(m *mem, text string, taken map[string]string, createdAge float64) {
	nt := normalize(text)
	for i := 0; ; i++ {
		f, ok := taken[nt]
		if !ok || (m.sub == subDupCopy && f == m.fact) {
			break
		}
		tm := d.ageTime(createdAge + float64(i))
		text = strings.TrimSuffix(text, ".") + " (noted " + tm.Format("January 2") + ")."
		nt = normalize(text)
	}
	taken[nt] = m.fact
	m.text, m.norm = text, nt
}

// topicValues draws three distinct values of t's kind.
func topicValues(r *rng, t *topic) [3]string {
	var out [3]string
	k := t.kind
	if k.gen == nil {
		for i, j := range r.sample(len(k.values), 3) {
			out[i] = k.values[j]
		}
		return out
	}
	for i := 0; i < 3; {
		v := k.gen(r, t.ent)
		dup := false
		for _, w := range out[:i] {
			if normalize(w) == normalize(v) {
				dup = true
			}
		}
		if !dup {
			out[i] = v
			i++
		}
	}
	return out
}

var hedges = []string{"Maybe {c}.", "{C}, probably.", "Not sure, but {c}.", "Possibly {c}.", "It might be that {c}.", "{C}, I guess."}

func hedge(r *rng, claim string) string {
	c := strings.TrimSuffix(claim, ".")
	lc := c
	if strings.HasPrefix(lc, "The ") {
		lc = "the " + lc[4:]
	}
	h := hedges[r.intn(len(hedges))]
	return strings.NewReplacer("{c}", lc, "{C}", c).Replace(h)
}

// copyText is an exact textual copy: the same words in another case or
// punctuation, which memrank's normaliser folds to the same text.
func copyText(r *rng, s string) string {
	switch r.intn(3) {
	case 0:
		return strings.TrimSuffix(strings.ToLower(s), ".")
	case 1:
		return strings.ToUpper(s)
	default:
		return strings.TrimSuffix(s, ".") + "!"
	}
}

// attrTopic carries one attribute topic's draws and the memories written so
// far between the steps of attributeTopic. The steps run in a fixed order:
// every draw from r happens in the same sequence as in one long function.
type attrTopic struct {
	d     *dataset
	r     *rng
	t     *topic
	taken map[string]string
	k     *kind
	e     *entity

	// plan
	hasOld, oldMarked    bool
	nDup, nDetail        int
	hasSpec, specCorrect bool
	detOrder, claimOrder []int
	popAnswer            bool
	popDetail            int
	ansSlot              int
	factBase, ansFact    string

	// written memories
	ans              *mem
	ansLife, oldLife life

	// when the current value became true
	since, lowest float64
	month         string
}

func (d *dataset) attributeTopic(r *rng, t *topic, taken map[string]string) {
	a := &attrTopic{d: d, r: r, t: t, taken: taken, k: t.kind, e: t.ent}
	a.plan()
	a.answer()
	a.duplicates()
	a.outdated()
	a.currentSince()
	a.details()
	a.speculation()
}

// plan draws the topic's values and structure before any memory is written.
func (a *attrTopic) plan() {
	r, t, k := a.r, a.t, a.k
	t.values = topicValues(r, t)
	a.hasOld = r.chance(pOutdated)
	a.oldMarked = r.chance(pOutdatedMarked)
	a.nDup = r.pick(30, 35, 20, 15) // 0..3 duplicates
	a.nDetail = r.between(1, min(3, len(k.details)))
	a.hasSpec = r.chance(pSpeculation)
	a.specCorrect = r.chance(pSpecCorrect)
	a.detOrder = r.perm(len(k.details))
	// A popular memory is the answer, or else a generic detail (one that
	// names neither the current value nor a date); -1 for none.
	a.popAnswer, a.popDetail = false, -1
	if t.popular {
		a.popAnswer = r.chance(pPopularIsAnswer)
		if !a.popAnswer {
			for i := 0; i < a.nDetail && a.popDetail < 0; i++ {
				if tpl := k.details[a.detOrder[i]].tpl; !strings.Contains(tpl, "{V}") && !strings.Contains(tpl, "{M}") {
					a.popDetail = i
				}
			}
			a.popAnswer = a.popDetail < 0
		}
	}

	a.ansSlot, a.factBase = 0, t.id+"/v"
	a.ansFact = a.factBase + "1"
	if a.hasOld {
		a.ansFact = a.factBase + "2"
	}
	a.claimOrder = r.perm(len(k.claims))
}

// ents lists a memory's entities: the topic's entity, and the value when it
// is itself an entity and the memory states it.
func (a *attrTopic) ents(withValue bool, v string) []string {
	out := []string{a.e.tag}
	if withValue && a.k.valueEntity {
		out = append(out, v)
	}
	return out
}

// answer writes the topic's answer.
func (a *attrTopic) answer() {
	d, r, t, k, e := a.d, a.r, a.t, a.k, a.e
	ans := &mem{t: t, sub: subAnswer, role: "answer", fact: a.ansFact, correct: true, grade: 3, valueSlot: a.ansSlot}
	ansLife := life{}
	if t.stale {
		ansLife.observed = r.uniform(300, 700)
	} else {
		ansLife.observed = r.logUniform(1, 240)
	}
	ansLife.n = observations(r, [3]float64{0, 0, 40}, [3]float64{1, 3, 40}, [3]float64{4, 12, 20})
	ansLife.created = spanBack(r, ansLife.observed, ansLife.n, 7, 365)
	if r.chance(0.15) {
		ansLife.accesses = roundCount(r.logUniform(20, 120))
	} else {
		ansLife.accesses = roundCount(r.logNormal(4, 0.9))
	}
	ansLife.accessed = lastAccess(r, ansLife.created)
	prof := profAnswer
	if t.popular && a.popAnswer {
		ans.popular, ans.role = true, "popular"
		prof = profPopular
		ansLife = popularLife(r)
	}
	d.setText(ans, fill(k.claims[a.claimOrder[0]], e, t.values[0], "", ""), a.taken, ansLife.created)
	d.finish(r, ans, prof, ansLife, a.ents(true, t.values[0]))
	t.mems = append(t.mems, ans)
	a.ans, a.ansLife = ans, ansLife
}

// duplicates writes restatements of the answer that dedup did not fold.
func (a *attrTopic) duplicates() {
	d, r, t, k, e := a.d, a.r, a.t, a.k, a.e
	ans, ansLife, claimOrder := a.ans, a.ansLife, a.claimOrder
	for i := 0; i < a.nDup; i++ {
		m := &mem{t: t, role: "duplicate", fact: a.ansFact, correct: true, grade: 3, valueSlot: a.ansSlot, base: ans}
		switch r.pick(1-pCopy-pLoose, pLoose, pCopy) {
		case 0:
			m.sub, m.tau = subDup, r.uniform(0.92, 0.975)
		case 1:
			m.sub, m.tau = subDupLoose, r.uniform(0.86, 0.92)
		default:
			m.sub, m.tau = subDupCopy, r.uniform(0.985, 0.998)
		}
		var l life
		if t.stale {
			l.created = r.uniform(ansLife.observed, math.Max(ansLife.created, ansLife.observed+1))
		} else {
			l.created = r.uniform(0.5, math.Max(ansLife.created, 1))
		}
		l.n = observations(r, [3]float64{0, 0, 75}, [3]float64{1, 2, 25})
		l.observed = l.created
		if l.n > 0 {
			lo := 0.5
			if t.stale {
				lo = ansLife.observed
			}
			l.observed = r.uniform(math.Min(lo, l.created), l.created)
		}
		l.accesses = roundCount(r.logNormal(1.5, 1.0))
		l.accessed = lastAccess(r, l.created)
		var text string
		if m.sub == subDupCopy {
			text = copyText(r, ans.text)
		} else {
			text = fill(k.claims[claimOrder[1+i%(len(claimOrder)-1)]], e, t.values[0], "", "")
		}
		d.setText(m, text, a.taken, l.created)
		d.finish(r, m, profDup, l, a.ents(true, t.values[0]))
		t.mems = append(t.mems, m)
	}
}

// outdated writes the outdated earlier value, when the topic has one: the
// answer for a long time before.
func (a *attrTopic) outdated() {
	if !a.hasOld {
		return
	}
	d, r, t, k, e := a.d, a.r, a.t, a.k, a.e
	ansLife := a.ansLife
	m := &mem{t: t, fact: a.factBase + "1", correct: false, grade: 0, valueSlot: 1}
	if a.oldMarked {
		m.sub, m.role, m.super = subSuperseded, "superseded", a.ans
	} else {
		m.sub, m.role = subOutdated, "outdated"
	}
	var l life
	l.observed = r.uniform(math.Max(120, ansLife.created+1), math.Max(700, ansLife.created+30))
	l.n = observations(r, [3]float64{0, 0, 15}, [3]float64{1, 6, 85})
	l.created = spanBack(r, l.observed, l.n, 30, 400)
	if r.chance(0.30) {
		l.accesses = roundCount(r.logUniform(30, 150))
	} else {
		l.accesses = roundCount(r.logNormal(10, 0.7))
	}
	if a.oldMarked {
		// Read until the new value replaced it.
		u := r.float()
		l.accessed = ansLife.created + (l.created-ansLife.created)*u*u
	} else {
		l.accessed = lastAccess(r, l.created)
	}
	d.setText(m, fill(k.claims[r.intn(len(k.claims))], e, t.values[1], "", ""), a.taken, l.created)
	d.finish(r, m, profOutdated, l, a.ents(true, t.values[1]))
	t.mems = append(t.mems, m)
	a.oldLife = l
}

// currentSince draws since, the age at which the current value became true:
// between the outdated value's last observation and the answer's creation,
// or some time before the answer was first written. Memories that state the
// current value are not older than that, and "since {M}" details name it.
func (a *attrTopic) currentSince() {
	r, ansLife := a.r, a.ansLife
	a.since = math.Min(ansLife.created+r.logUniform(1, 300), math.Max(storeAge, ansLife.created))
	if a.hasOld {
		a.since = r.uniform(ansLife.created, a.oldLife.observed)
	}
	a.lowest = 0.5 // the youngest age a topic memory may have
	if a.t.stale {
		a.lowest = ansLife.observed
	}
	a.month = a.d.ageTime(a.since).Format("January 2006")
}

// notBefore moves a creation age older than since to a younger one.
func (a *attrTopic) notBefore(created float64) float64 {
	if created > a.since {
		return a.r.uniform(math.Min(a.lowest, a.since), a.since)
	}
	return created
}

// details writes the supporting details.
func (a *attrTopic) details() {
	d, r, t, k, e := a.d, a.r, a.t, a.k, a.e
	ansLife := a.ansLife
	for i := 0; i < a.nDetail; i++ {
		dt := k.details[a.detOrder[i]]
		m := &mem{t: t, sub: subDetail, role: "detail", fact: t.id + "/d" + itoa(i+1), correct: true, grade: dt.grade}
		var l life
		if t.stale {
			l.created = math.Min(r.uniform(ansLife.observed, ansLife.observed+200), math.Max(storeAge, ansLife.observed))
		} else {
			l.created = r.logUniform(1, 500)
		}
		if strings.Contains(dt.tpl, "{V}") || strings.Contains(dt.tpl, "{M}") {
			l.created = a.notBefore(l.created)
		}
		l.n = observations(r, [3]float64{0, 0, 60}, [3]float64{1, 3, 35}, [3]float64{4, 8, 5})
		l.observed = l.created
		if l.n > 0 {
			lo := 0.5
			if t.stale {
				lo = ansLife.observed
			}
			l.observed = r.uniform(math.Min(lo, l.created), l.created)
		}
		l.accesses = roundCount(r.logNormal(3, 1.0))
		l.accessed = lastAccess(r, l.created)
		prof := profDetail
		if i == a.popDetail {
			m.popular, m.role = true, "popular"
			prof = profPopular
			l = popularLife(r)
		}
		dw := ""
		if len(dt.words) > 0 {
			for {
				dw = dt.words[r.intn(len(dt.words))]
				if dw != e.name && dw != t.values[0] {
					break
				}
			}
		}
		d.setText(m, fill(dt.tpl, e, t.values[0], dw, a.month), a.taken, l.created)
		d.finish(r, m, prof, l, a.ents(strings.Contains(dt.tpl, "{V}"), t.values[0]))
		t.mems = append(t.mems, m)
	}
}

// speculation writes the on-topic speculation, when the topic has one: a
// low-confidence guess, right or wrong.
func (a *attrTopic) speculation() {
	if !a.hasSpec {
		return
	}
	d, r, t, k, e := a.d, a.r, a.t, a.k, a.e
	ansLife, specCorrect := a.ansLife, a.specCorrect
	m := &mem{t: t, sub: subSpeculation, role: "speculation", fact: t.id + "/s1", correct: specCorrect}
	v := t.values[2]
	m.valueSlot = 2
	if specCorrect {
		v, m.grade, m.valueSlot = t.values[0], 1, 0
	}
	var l life
	if t.stale {
		l.created = math.Min(r.uniform(ansLife.observed, ansLife.observed+150), math.Max(storeAge, ansLife.observed))
	} else {
		l.created = r.logUniform(1, 400)
	}
	if specCorrect {
		l.created = a.notBefore(l.created)
	}
	l.n = observations(r, [3]float64{0, 0, 85}, [3]float64{1, 1, 15})
	l.observed = l.created
	if l.n > 0 {
		l.observed = r.uniform(math.Min(0.5, l.created), l.created)
		if t.stale {
			l.observed = math.Max(l.observed, math.Min(ansLife.observed, l.created))
		}
	}
	l.accesses = roundCount(r.logNormal(1, 1.0))
	l.accessed = lastAccess(r, l.created)
	d.setText(m, hedge(r, fill(k.claims[r.intn(len(k.claims))], e, v, "", "")), a.taken, l.created)
	d.finish(r, m, profSpec, l, a.ents(true, v))
	t.mems = append(t.mems, m)
}

// popularLife: generic, fresh, confident memories read constantly.
func popularLife(r *rng) life {
	var l life
	l.observed = r.logUniform(1, 30)
	l.n = r.between(4, 12)
	l.created = l.observed + r.logUniform(30, 400)
	l.accesses = roundCount(r.logUniform(50, 200))
	l.accessed = r.uniform(0, 2)
	return l
}

func (d *dataset) episode(r *rng, t *topic, taken map[string]string) {
	e := t.ent
	m := &mem{t: t, sub: subEpisode, role: "answer", fact: t.id + "/v1", correct: true}
	var l life
	l.created = r.uniform(0.5, 730) // events happen at a constant rate
	l.n = observations(r, [3]float64{0, 0, 85}, [3]float64{1, 2, 15})
	l.observed = l.created
	if l.n > 0 {
		l.observed = r.uniform(math.Min(0.5, l.created), l.created)
	}
	l.accesses = roundCount(r.logNormal(1, 1.0))
	l.accessed = lastAccess(r, l.created)
	tpls, evs := episodeTpls[e.class], episodeEvents[e.class]
	when := d.ageTime(l.created).Format("January 2, 2006")
	text := fill(strings.NewReplacer("{X}", evs[r.intn(len(evs))], "{W}", when).Replace(tpls[r.intn(len(tpls))]), e, "", "", "")
	d.setText(m, text, taken, l.created)
	d.finish(r, m, profEpisode, l, []string{e.tag})
	t.mems = append(t.mems, m)
}

// finish draws the memory's provenance and writes its payload.
func (d *dataset) finish(r *rng, m *mem, prof profile, l life, entities []string) {
	k := m.t.kind
	mtype, decay := "event", ""
	if k != nil {
		mtype, decay = k.mtype, k.decay
	}
	si := r.pick(prof.source...)
	ei := r.pick(prof.model...)
	gi := r.pick(prof.grounding...)
	conf := confidence(sourceLevel[si], l.n, modelQuality[ei], typePrior[mtype], groundingPen[gi])

	p := payload{
		Text: m.text, MemoryType: mtype, Source: sources[si], ExtractorModel: models[ei],
		Grounding: groundings[gi], Observations: l.n, Confidence: f4(conf), DecayCategory: decay,
		CreatedAt: d.stamp(l.created), LastObservedAt: d.stamp(l.observed),
		AccessCounts: map[string]int{}, Entities: entities, Retrievable: true, Tier: "active", Schema: 1,
	}
	if l.accesses > 0 {
		p.LastAccessedAt = d.stamp(l.accessed)
		if r.chance(0.4) {
			a := roundCount(float64(l.accesses) * r.uniform(0.3, 0.9))
			if a > 0 {
				p.AccessCounts["replica-a"] = a
			}
			if l.accesses-a > 0 {
				p.AccessCounts["replica-b"] = l.accesses - a
			}
		} else {
			p.AccessCounts["replica-a"] = l.accesses
		}
	}
	// Sessions: the first observation at created, the last at observed, the
	// others in between, oldest first.
	ages := []float64{l.created}
	for i := 1; i < l.n; i++ {
		ages = append(ages, r.uniform(l.observed, l.created))
	}
	if l.n > 0 {
		ages = append(ages, l.observed)
	}
	slices.SortFunc(ages, func(a, b float64) int { return -cmpFloat(a, b) })
	for _, a := range ages {
		s := session(a)
		if !slices.Contains(p.SessionIDs, s) {
			p.SessionIDs = append(p.SessionIDs, s)
		}
		p.TurnIDs = append(p.TurnIDs, s+":t"+pad(r.between(1, 40), 2))
	}
	m.p = p
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// assignIDs shuffles the memories and numbers them 1..N, so that an id says
// nothing about a memory's role or topic.
func (d *dataset) assignIDs(r *rng) {
	var all []*mem
	for _, t := range d.topics {
		all = append(all, t.mems...)
	}
	d.mems = make([]*mem, len(all))
	for i, j := range r.perm(len(all)) {
		m := all[j]
		m.id = uint64(i + 1)
		d.mems[i] = m
	}
	for _, m := range d.mems {
		if m.super != nil {
			m.p.SupersededBy = fmt.Sprint(m.super.id)
		}
	}
}

func (d *dataset) buildQueries() {
	n := 0
	for _, t := range d.topics {
		if !t.queried {
			continue
		}
		n++
		q := &query{id: "q" + pad(n, 3), t: t, relevant: map[string]int{}}
		for _, m := range t.mems {
			if m.grade > 0 {
				q.relevant[fmt.Sprint(m.id)] = m.grade
			}
		}
		q.vec = t.queryVec
		d.queries = append(d.queries, q)
	}
}

package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// Relations between a query and a memory, or between two memories, whose
// cosine similarities are measured.
const (
	relAnswer      = "query vs its answer"
	relDupAll      = "query vs duplicate (all)"
	relDupPara     = "query vs paraphrase"
	relDupLoose    = "query vs loose paraphrase"
	relDupCopy     = "query vs exact copy"
	relOutdated    = "query vs outdated value"
	relDetail      = "query vs supporting detail"
	relSpec        = "query vs speculation"
	relNear        = "query vs same entity, other topic"
	relOther       = "query vs other entity"
	relOtherKind   = "query vs other entity, same kind"
	relPopular     = "query vs popular memory, other topic"
	relUnNear      = "unanswerable vs same entity"
	relUnOther     = "unanswerable vs other entity"
	relAnsOld      = "answer vs outdated value"
	relAnsPara     = "answer vs paraphrase"
	relAnsLoose    = "answer vs loose paraphrase"
	relAnsCopy     = "answer vs exact copy"
	relAnsDetail   = "answer vs detail"
	relAnsSpec     = "answer vs speculation"
	relSpecCorrect = "query vs correct speculation"
	relOldMinus    = "paired: outdated minus answer"
	relDupMinus    = "paired: duplicate minus answer"
)

// target is a relation's stated target: the mean (NaN when there is none) and
// a description.
type target struct {
	rel  string
	mean float64
	desc string
}

var targets = []target{
	{relAnswer, 0.62, "0.62, sd 0.07, range ~0.45-0.80"},
	{relDupAll, math.NaN(), "close to the answer's"},
	{relDupPara, math.NaN(), ""},
	{relDupLoose, math.NaN(), ""},
	{relDupCopy, math.NaN(), ""},
	{relOutdated, math.NaN(), "the answer's mean +-0.01, sd 0.06"},
	{relOldMinus, 0, "0 (same query; within 0.01)"},
	{relDupMinus, math.NaN(), "close to 0 (same query)"},
	{relDetail, 0.50, "0.50, sd 0.07"},
	{relSpec, 0.58, "0.58, sd 0.08"},
	{relSpecCorrect, math.NaN(), ""},
	{relNear, 0.38, "0.38, sd 0.07"},
	{relOther, 0.15, "0.15, sd 0.07"},
	{relOtherKind, 0.25, "0.25 (own assumption)"},
	{relPopular, math.NaN(), "as their role (no extra similarity)"},
	{relUnNear, 0.38, "0.38 (as near distractors)"},
	{relUnOther, 0.15, "0.15"},
	{relAnsOld, 0.825, "0.75-0.90"},
	{relAnsPara, 0.95, "0.92-0.98"},
	{relAnsLoose, 0.89, "0.86-0.92"},
	{relAnsCopy, math.NaN(), "0.985-0.998 (own assumption)"},
	{relAnsDetail, math.NaN(), ""},
	{relAnsSpec, math.NaN(), ""},
}

type summary struct {
	rel                       string
	n                         int
	mean, sd, p5, p95, lo, hi float64
}

func summarise(rel string, xs []float64) summary {
	s := summary{rel: rel, n: len(xs)}
	if len(xs) == 0 {
		return s
	}
	slices.Sort(xs)
	for _, x := range xs {
		s.mean += x
	}
	s.mean /= float64(len(xs))
	for _, x := range xs {
		s.sd += (x - s.mean) * (x - s.mean)
	}
	if len(xs) > 1 {
		s.sd = math.Sqrt(s.sd / float64(len(xs)-1))
	}
	s.p5, s.p95 = quantile(xs, 0.05), quantile(xs, 0.95)
	s.lo, s.hi = xs[0], xs[len(xs)-1]
	return s
}

// quantile of sorted xs, linear interpolation.
func quantile(xs []float64, q float64) float64 {
	pos := q * float64(len(xs)-1)
	i := int(pos)
	if i+1 >= len(xs) {
		return xs[len(xs)-1]
	}
	f := pos - float64(i)
	return xs[i]*(1-f) + xs[i+1]*f
}

func unit(v []float64) []float64 {
	return normalise(append([]float64(nil), v...))
}

// similarityStats measures the cosine of every query-memory pair (and of
// the answer with its topic's other claims) by relation, from the rounded
// vectors as written.
func (d *dataset) similarityStats() []summary {
	vals := map[string][]float64{}
	mv := make([][]float64, len(d.mems))
	for i, m := range d.mems {
		mv[i] = unit(m.vec)
	}
	for _, q := range d.queries {
		qv := unit(q.vec)
		var ansSim float64
		for _, m := range q.t.mems {
			if m.sub == subAnswer {
				ansSim = dot(qv, unit(m.vec))
			}
		}
		for i, m := range d.mems {
			s := dot(qv, mv[i])
			switch {
			case q.t.unanswerable && m.t.ent == q.t.ent:
				vals[relUnNear] = append(vals[relUnNear], s)
			case q.t.unanswerable:
				vals[relUnOther] = append(vals[relUnOther], s)
			case m.t == q.t:
				switch m.sub {
				case subAnswer:
					vals[relAnswer] = append(vals[relAnswer], s)
				case subDup:
					vals[relDupPara] = append(vals[relDupPara], s)
					vals[relDupAll] = append(vals[relDupAll], s)
					vals[relDupMinus] = append(vals[relDupMinus], s-ansSim)
				case subDupLoose:
					vals[relDupLoose] = append(vals[relDupLoose], s)
					vals[relDupAll] = append(vals[relDupAll], s)
					vals[relDupMinus] = append(vals[relDupMinus], s-ansSim)
				case subDupCopy:
					vals[relDupCopy] = append(vals[relDupCopy], s)
					vals[relDupAll] = append(vals[relDupAll], s)
					vals[relDupMinus] = append(vals[relDupMinus], s-ansSim)
				case subOutdated, subSuperseded:
					vals[relOutdated] = append(vals[relOutdated], s)
					vals[relOldMinus] = append(vals[relOldMinus], s-ansSim)
				case subDetail:
					vals[relDetail] = append(vals[relDetail], s)
				case subSpeculation:
					vals[relSpec] = append(vals[relSpec], s)
					if m.correct {
						vals[relSpecCorrect] = append(vals[relSpecCorrect], s)
					}
				}
			case m.t.ent == q.t.ent:
				vals[relNear] = append(vals[relNear], s)
			default:
				vals[relOther] = append(vals[relOther], s)
				if m.t.kind == q.t.kind {
					vals[relOtherKind] = append(vals[relOtherKind], s)
				}
			}
			if m.popular && m.t != q.t && !q.t.unanswerable {
				vals[relPopular] = append(vals[relPopular], s)
			}
		}
	}
	for _, t := range d.topics {
		var ans []float64
		for _, m := range t.mems {
			if m.sub == subAnswer && !t.episode {
				ans = unit(m.vec)
			}
		}
		if ans == nil {
			continue
		}
		for _, m := range t.mems {
			rel := ""
			switch m.sub {
			case subOutdated, subSuperseded:
				rel = relAnsOld
			case subDup:
				rel = relAnsPara
			case subDupLoose:
				rel = relAnsLoose
			case subDupCopy:
				rel = relAnsCopy
			case subDetail:
				rel = relAnsDetail
			case subSpeculation:
				rel = relAnsSpec
			}
			if rel != "" {
				vals[rel] = append(vals[rel], dot(ans, unit(m.vec)))
			}
		}
	}
	out := make([]summary, 0, len(targets))
	for _, t := range targets {
		out = append(out, summarise(t.rel, vals[t.rel]))
	}
	return out
}

func writeSimilarityTable(w io.Writer, rows []summary) {
	fmt.Fprintln(w, "| relation | pairs | mean | sd | p5 | p95 | min | max | target |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---|")
	for i, s := range rows {
		fmt.Fprintf(w, "| %s | %d | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %s |\n",
			s.rel, s.n, s.mean, s.sd, s.p5, s.p95, s.lo, s.hi, targets[i].desc)
	}
}

// roleAgg accumulates the memories of one role (or of the popular ones).
type roleAgg struct {
	name              string
	n, gated, never   int
	conf, acc, obsAge []float64
}

// writeSetStats prints counts and metadata by role and by relation.
func (d *dataset) writeSetStats(w io.Writer) {
	writeRoleTable(w, d.roleGroups())
	d.writeTopicCounts(w)
	d.writeKindCounts(w)
}

// roleGroups aggregates the memories by role, in a fixed role order, with
// the popular memories also in a group of their own.
func (d *dataset) roleGroups() []*roleAgg {
	groups := []*roleAgg{}
	find := func(name string) *roleAgg {
		for _, g := range groups {
			if g.name == name {
				return g
			}
		}
		g := &roleAgg{name: name}
		groups = append(groups, g)
		return g
	}
	for _, name := range []string{subAnswer, subDup, subDupLoose, subDupCopy, subSuperseded, subOutdated, subDetail, subSpeculation, subEpisode, "popular (any of the above)"} {
		find(name)
	}
	for _, m := range d.mems {
		gs := []*roleAgg{find(m.sub)}
		if m.popular {
			gs = append(gs, find("popular (any of the above)"))
		}
		for _, g := range gs {
			g.n++
			c := float64(m.p.Confidence)
			g.conf = append(g.conf, c)
			if c < 0.50 {
				g.gated++
			}
			acc := 0
			for _, v := range m.p.AccessCounts {
				acc += v
			}
			if acc == 0 {
				g.never++
			}
			g.acc = append(g.acc, float64(acc))
			g.obsAge = append(g.obsAge, d.ageOf(m.p.LastObservedAt))
		}
	}
	return groups
}

// writeRoleTable prints the memories table: one row per non-empty role group
// and the total (which does not count the popular group twice).
func writeRoleTable(w io.Writer, groups []*roleAgg) {
	fmt.Fprintln(w, "| memories | count | mean confidence | confidence < 0.50 | accesses p50 | accesses p90 | never accessed | last observed, days ago, p10 / p50 / p90 |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---|")
	total := 0
	for _, g := range groups {
		if g.n == 0 {
			continue
		}
		if !strings.HasPrefix(g.name, "popular") {
			total += g.n
		}
		mc := 0.0
		for _, c := range g.conf {
			mc += c
		}
		slices.Sort(g.acc)
		slices.Sort(g.obsAge)
		fmt.Fprintf(w, "| %s | %d | %.2f | %d%% | %.0f | %.0f | %d%% | %.0f / %.0f / %.0f |\n",
			g.name, g.n, mc/float64(g.n), pct(g.gated, g.n), quantile(g.acc, 0.5), quantile(g.acc, 0.9),
			pct(g.never, g.n), quantile(g.obsAge, 0.1), quantile(g.obsAge, 0.5), quantile(g.obsAge, 0.9))
	}
	fmt.Fprintf(w, "| total | %d | | | | | | |\n", total)
}

// writeTopicCounts prints the topics' and the queries' counts by structure.
func (d *dataset) writeTopicCounts(w io.Writer) {
	var attr, stale, withOld, marked, popular, ans, unans, qStale, qOld, qMarked, qPopular, qSpec int
	for _, t := range d.topics {
		if t.episode || t.unanswerable {
			if t.unanswerable {
				unans++
			}
			continue
		}
		attr++
		hasOld, isMarked, hasPop, hasSpec := false, false, false, false
		for _, m := range t.mems {
			switch m.sub {
			case subSuperseded:
				hasOld, isMarked = true, true
			case subOutdated:
				hasOld = true
			case subSpeculation:
				hasSpec = true
			}
			if m.popular {
				hasPop = true
			}
		}
		count := func(b bool, n *int) {
			if b {
				*n++
			}
		}
		count(t.stale, &stale)
		count(hasOld, &withOld)
		count(isMarked, &marked)
		count(hasPop, &popular)
		if t.queried {
			ans++
			count(t.stale, &qStale)
			count(hasOld, &qOld)
			count(isMarked, &qMarked)
			count(hasPop, &qPopular)
			count(hasSpec, &qSpec)
		}
	}
	fmt.Fprintf(w, "\nentities %d; attribute topics %d (stale answer %d, with an outdated value %d of which marked superseded %d, holding a popular memory %d); episode topics %d\n",
		len(d.entities), attr, stale, withOld, marked, popular, len(d.topics)-attr-unans)
	fmt.Fprintf(w, "queries %d: answerable %d (stale answer %d, outdated value %d of which marked %d, popular memory on topic %d, speculation on topic %d), unanswerable %d\n",
		len(d.queries), ans, qStale, qOld, qMarked, qPopular, qSpec, unans)
}

// writeKindCounts prints the answerable queries' counts by kind.
func (d *dataset) writeKindCounts(w io.Writer) {
	kindCount := map[string]int{}
	for _, q := range d.queries {
		if !q.t.unanswerable {
			kindCount[q.t.kind.name]++
		}
	}
	var parts []string
	for _, k := range kinds { // kinds order, not map order
		if n := kindCount[k.name]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k.name, n))
		}
	}
	fmt.Fprintf(w, "answerable queries by kind: %s\n", strings.Join(parts, ", "))
}

func pct(a, b int) int {
	if b == 0 {
		return 0
	}
	return int(math.Round(100 * float64(a) / float64(b)))
}

// ageOf is the age in days of an RFC 3339 time before the set's Now.
func (d *dataset) ageOf(ts string) float64 {
	t, err := parseTime(ts)
	if err != nil {
		return math.NaN()
	}
	return d.cfg.Now.Sub(t).Hours() / 24
}

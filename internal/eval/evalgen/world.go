package main

// The world the memories describe: entity classes, topic kinds and the small
// word lists their texts are filled from. Texts are informational (vectors
// drive similarity); what matters about them is that paraphrases differ after
// normalisation and exact copies do not.

// class is the kind of entity a memory is about.
type class uint8

const (
	classUser class = 1 << iota
	classPerson
	classProject
	classTool
)

// detailTpl is a supporting-detail template: grade 2 (supporting) or 1
// (minor), filled with {E}, {Es}, {V} (the current value) and {D} (a word of
// words, when words is not empty).
type detailTpl struct {
	tpl   string
	grade int
	words []string
}

// kind is a topic kind (an attribute of an entity). It fixes the memory type
// and decay category of every memory stated about it.
type kind struct {
	name    string
	classes class
	mtype   string // entity|event|fact|preference|relation
	decay   string // decay_category, "" for the 90-day default
	values  []string
	gen     func(r *rng, e *entity) string // generated values, when values is empty
	claims  []string                       // paraphrase templates of a claim: {E}, {Es}, {V}
	details []detailTpl
	// valueEntity marks kinds whose value names a person or organisation that
	// belongs in the memory's entities list.
	valueEntity bool
}

type entity struct {
	key    string // "e07"
	class  class
	name   string // "Priya", "Project Falcon", "Grafana", "the user"
	poss   string // possessive: "Priya's", "the user's"
	handle string // e-mail handle
	tag    string // the entities-list name: "Priya", "user"
}

var (
	personNames = []string{
		"Priya", "Marco", "Lena", "Tomas", "Aiko", "Ben", "Chloe", "Diego", "Elif", "Farah",
		"Gustav", "Hana", "Ivan", "Jonas", "Kemi", "Liam", "Mei", "Nora", "Omar", "Rosa",
		"Sven", "Tara", "Umar", "Vera", "Wes",
	}
	projectNames = []string{
		"Falcon", "Atlas", "Beacon", "Cobalt", "Delta", "Ember", "Fjord", "Granite", "Harbor",
		"Juniper", "Kestrel", "Lumen", "Meridian", "Nimbus", "Onyx", "Prism",
	}
	toolNames = []string{
		"Grafana", "Linear", "Notion", "Figma", "Terraform", "Sentry", "Jira", "Datadog",
		"GitLab", "Confluence", "PagerDuty", "Miro",
	}
	surnames = []string{
		"Chen", "Lopez", "Becker", "Tanaka", "Nilsson", "Patel", "Ivanova", "Mensah", "Duarte",
		"Novak", "Weiss", "Rossi", "Okafor", "Haddad", "Kowalski", "Moreau",
	}
	personValues = []string{
		"Alex Chen", "Maria Lopez", "Tom Becker", "Yuki Tanaka", "Sara Nilsson", "Raj Patel",
		"Olga Ivanova", "Kwame Mensah", "Ines Duarte", "Paul Novak", "Hannah Weiss", "Leo Rossi",
		"Ada Okafor", "Karim Haddad",
	}
	weekdays   = []string{"Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays"}
	monthNames = []string{
		"January", "February", "March", "April", "May", "June", "July", "August", "September",
		"October", "November", "December",
	}
	mailDomains = []string{"gmail.com", "fastmail.com", "proton.me", "outlook.com", "hey.com", "icloud.com"}
)

func genDay(r *rng) string {
	return monthNames[r.intn(12)] + " " + itoa(1+r.intn(28))
}

// genFutureDate is a date after the set's now (2026-11-24), within about seven months.
func genFutureDate(r *rng) string {
	m := 11 + r.intn(8) // December 2026 .. June 2027 (month index from January 2026)
	y := 2026
	if m >= 12 {
		m -= 12
		y++
	}
	return monthNames[m] + " " + itoa(1+r.intn(28)) + ", " + itoa(y)
}

func genEmail(r *rng, e *entity) string {
	h := e.handle
	switch r.intn(3) {
	case 1:
		h += "." + string(rune('a'+r.intn(26)))
	case 2:
		h += itoa(10 + r.intn(90))
	}
	return h + "@" + mailDomains[r.intn(len(mailDomains))]
}

func genPhone(r *rng, _ *entity) string {
	switch r.intn(3) {
	case 0:
		return "+1 415 555 0" + pad(r.intn(1000), 3)
	case 1:
		return "+44 7700 900" + pad(r.intn(1000), 3)
	default:
		return "+49 151 " + pad(r.intn(10000), 4) + " " + pad(r.intn(10000), 4)
	}
}

func genMoney(r *rng, lo, hi, step int) string {
	v := lo + step*r.intn((hi-lo)/step+1)
	return "$" + thousands(v)
}

var kinds = []*kind{
	{
		name: "employer", classes: classUser | classPerson, mtype: "fact", decay: "relationship", valueEntity: true,
		values: []string{
			"Acme Robotics", "Globex", "Initech", "Umbrella Health", "Stark Logistics", "Wayne Analytics",
			"Hooli", "Pied Piper", "Soylent Foods", "Vandelay Industries", "Cyberdyne Labs", "Tyrell Systems",
			"Massive Dynamic", "Wonka Labs",
		},
		claims: []string{
			"{E} works at {V}.", "{E} is employed by {V}.", "{Es} employer is {V}.", "{E} has a job at {V}.",
			"{E} currently works for {V}.",
		},
		details: []detailTpl{
			{"{Es} team at {V} is the {D} team.", 2, []string{"platform", "payments", "search", "growth", "infrastructure", "data", "mobile", "security"}},
			{"{E} commutes to the {V} office by {D}.", 1, []string{"bike", "train", "bus", "car", "scooter"}},
			{"{E} joined {V} in {M}.", 2, nil},
			{"{E} works from the {V} office on {D}.", 1, weekdays},
		},
	},
	{
		name: "role", classes: classUser | classPerson, mtype: "fact",
		values: []string{
			"staff engineer", "data scientist", "engineering manager", "product designer",
			"site reliability engineer", "backend developer", "tech lead", "machine learning engineer",
			"product manager", "security engineer", "QA lead", "frontend developer",
		},
		claims: []string{
			"{E} is a {V}.", "{Es} job title is {V}.", "{E} works as a {V}.", "{Es} role is {V}.",
			"{E} holds a {V} position.",
		},
		details: []detailTpl{
			{"{E} became a {V} in {M}.", 2, nil},
			{"As a {V}, {E} spends most days on {D}.", 2, []string{"code review", "planning", "on-call work", "user interviews", "hiring", "design reviews"}},
			{"{E} wants to grow beyond the {V} role within a year.", 1, nil},
		},
	},
	{
		name: "city", classes: classUser | classPerson, mtype: "fact",
		values: []string{
			"Lisbon", "Berlin", "Toronto", "Austin", "Melbourne", "Utrecht", "Seoul", "Denver", "Porto",
			"Vienna", "Montreal", "Edinburgh", "Copenhagen", "Barcelona",
		},
		claims: []string{
			"{E} lives in {V}.", "{E} is based in {V}.", "{Es} home city is {V}.", "{E} resides in {V}.",
			"{E} has settled in {V}.",
		},
		details: []detailTpl{
			{"{E} lives in the {D} part of {V}.", 2, []string{"north", "south", "east", "west", "old town"}},
			{"{E} likes the cafes in {V}.", 1, nil},
			{"{E} moved to {V} for {D}.", 2, []string{"work", "family", "the weather", "a partner", "school"}},
		},
	},
	{
		name: "email", classes: classUser | classPerson, mtype: "entity", decay: "contact", gen: genEmail,
		claims: []string{
			"{Es} email address is {V}.", "{E} can be reached at {V}.", "{Es} email is {V}.",
			"Email {E} at {V}.", "{E} uses {V} for email.",
		},
		details: []detailTpl{
			{"{E} prefers email over chat for {D}.", 1, []string{"scheduling", "long questions", "anything formal", "invoices"}},
			{"{E} checks email mostly in the {D}.", 1, []string{"morning", "evening", "afternoon"}},
			{"{E} asked to be copied on {D} threads.", 2, []string{"hiring", "release", "budget", "incident"}},
		},
	},
	{
		name: "phone", classes: classUser | classPerson, mtype: "entity", decay: "contact", gen: genPhone,
		claims: []string{
			"{Es} phone number is {V}.", "{E} can be called at {V}.", "{Es} mobile is {V}.",
			"Call {E} on {V}.", "{E} has the phone number {V}.",
		},
		details: []detailTpl{
			{"{E} does not answer calls during {D}.", 1, []string{"meetings", "mornings", "weekends", "school runs"}},
			{"{E} prefers {D} to phone calls.", 2, []string{"text messages", "Signal", "WhatsApp", "voice notes"}},
			{"{E} keeps the phone on silent after {D}.", 1, []string{"8 pm", "9 pm", "10 pm"}},
		},
	},
	{
		name: "manager", classes: classUser | classPerson, mtype: "relation", decay: "relationship", valueEntity: true,
		values: personValues,
		claims: []string{
			"{E} reports to {V}.", "{Es} manager is {V}.", "{V} is {Es} manager.", "{E} has {V} as a manager.",
			"{E} is managed by {V}.",
		},
		details: []detailTpl{
			{"{E} has a weekly one-on-one with {V} on {D}.", 2, weekdays},
			{"{V} approves {Es} {D}.", 2, []string{"time off", "expenses", "travel"}},
			{"{E} finds {V} {D}.", 1, []string{"supportive", "hard to reach", "very direct", "detail-oriented"}},
		},
	},
	{
		name: "editor", classes: classUser | classPerson, mtype: "preference", decay: "preference",
		values: []string{"Neovim", "VS Code", "Emacs", "IntelliJ IDEA", "Zed", "Sublime Text", "Helix", "Vim", "PyCharm", "Cursor"},
		claims: []string{
			"{E} prefers {V} as an editor.", "{Es} editor of choice is {V}.", "{E} writes code in {V}.",
			"{E} uses {V} for editing.", "{Es} main editor is {V}.",
		},
		details: []detailTpl{
			{"{E} uses {V} with the {D} color scheme.", 1, []string{"gruvbox", "solarized dark", "one dark", "tokyo night", "catppuccin"}},
			{"{E} keeps the {V} config in a {D}.", 1, []string{"dotfiles repo", "gist", "synced folder"}},
			{"{E} relies on {V} plugins for {D}.", 2, []string{"Go", "Python", "TypeScript", "Rust", "git blame", "testing"}},
		},
	},
	{
		name: "diet", classes: classUser | classPerson, mtype: "preference", decay: "preference",
		values: []string{"vegetarian", "vegan", "pescatarian", "gluten-free", "lactose-free", "halal", "kosher", "low-carb"},
		claims: []string{
			"{E} eats {V}.", "{E} follows a {V} diet.", "{Es} diet is {V}.", "{E} only orders {V} food.",
			"{E} keeps to {V} meals.",
		},
		details: []detailTpl{
			{"{Es} favourite {V} place is {D}.", 2, []string{"Green Fork", "Little Lemon", "Casa Verde", "Noodle Bar", "Saffron House"}},
			{"{E} is allergic to {D}.", 2, []string{"peanuts", "shellfish", "sesame", "kiwi"}},
			{"{E} cooks at home on {D}.", 1, []string{"weekdays", "Sundays", "most evenings"}},
		},
	},
	{
		name: "answer_style", classes: classUser, mtype: "preference", decay: "preference",
		values: []string{
			"short bullet-point answers", "detailed explanations with examples", "code first and prose after",
			"a formal tone", "a casual tone", "answers under 100 words", "step-by-step instructions",
			"tables for comparisons",
		},
		claims: []string{
			"{E} prefers {V}.", "{E} wants {V}.", "{E} likes {V} in replies.", "{Es} preferred answer style is {V}.",
			"{E} asked for {V}.",
		},
		details: []detailTpl{
			{"{E} dislikes {D} in answers.", 2, []string{"emojis", "long disclaimers", "filler phrases", "headings"}},
			{"{E} reads answers mostly on {D}.", 1, []string{"a phone", "a laptop", "a tablet"}},
		},
	},
	{
		name: "laptop", classes: classUser | classPerson, mtype: "fact", decay: "technical",
		values: []string{
			"a MacBook Pro M3", "a MacBook Air M2", "a ThinkPad X1 Carbon with Fedora", "a Framework 13 with Arch Linux",
			"a Dell XPS 13 with Ubuntu", "a Surface Laptop with Windows 11", "a ThinkPad T14 with NixOS", "a Mac mini M2",
		},
		claims: []string{
			"{E} works on {V}.", "{Es} main machine is {V}.", "{E} uses {V}.", "{Es} computer is {V}.",
			"{E} does most work on {V}.",
		},
		details: []detailTpl{
			{"{E} connects the machine to {D}.", 1, []string{"two monitors", "an ultrawide monitor", "a docking station"}},
			{"{E} runs {D} for local development.", 2, []string{"Docker Desktop", "Podman", "colima", "a Linux VM"}},
			{"{Es} laptop has {D} of RAM.", 2, []string{"16 GB", "32 GB", "64 GB"}},
		},
	},
	{
		name: "gym", classes: classUser | classPerson, mtype: "event",
		values: []string{
			"on Mondays and Thursdays", "on Tuesdays and Fridays", "every weekday morning", "only at weekends",
			"on Wednesday evenings", "three times a week", "every morning before work",
		},
		claims: []string{
			"{E} goes to the gym {V}.", "{E} trains {V}.", "{E} works out {V}.", "{E} exercises {V}.",
			"{E} hits the gym {V}.",
		},
		details: []detailTpl{
			{"{E} does {D} at the gym.", 2, []string{"weight training", "climbing", "spin classes", "swimming", "yoga"}},
			{"{Es} gym is near {D}.", 1, []string{"the office", "home", "the station"}},
		},
	},
	{
		name: "opinion_remote", classes: classUser | classPerson, mtype: "preference", decay: "opinion",
		values: []string{
			"is more productive", "makes collaboration harder", "works best two days a week",
			"suits senior people only", "should be the default", "hurts onboarding",
		},
		claims: []string{
			"{E} thinks remote work {V}.", "In {Es} view, remote work {V}.", "{E} believes remote work {V}.",
			"{Es} opinion is that remote work {V}.", "{E} feels remote work {V}.",
		},
		details: []detailTpl{
			{"{E} has worked remotely for {D}.", 2, []string{"two years", "five years", "a few months"}},
			{"{E} debated remote work with {D}.", 1, []string{"the team", "a manager", "friends"}},
		},
	},
	{
		name: "opinion_ai", classes: classUser, mtype: "preference", decay: "opinion",
		values: []string{
			"save a lot of time", "are overrated", "help with boilerplate only", "need careful review",
			"are great for writing tests", "make juniors lazy",
		},
		claims: []string{
			"{E} thinks AI coding assistants {V}.", "In {Es} view, AI coding assistants {V}.",
			"{E} believes AI coding assistants {V}.", "{Es} opinion is that AI coding assistants {V}.",
			"{E} feels AI coding assistants {V}.",
		},
		details: []detailTpl{
			{"{E} uses an AI assistant mostly for {D}.", 2, []string{"refactoring", "tests", "documentation", "SQL"}},
			{"{E} turned off inline AI suggestions in {D}.", 1, []string{"the editor", "code review"}},
		},
	},
	{
		name: "coffee", classes: classUser | classPerson, mtype: "preference", decay: "preference",
		values: []string{
			"flat white", "oat latte", "black filter coffee", "double espresso", "cappuccino", "cortado",
			"green tea", "chai latte", "decaf americano",
		},
		claims: []string{
			"{E} drinks {V}.", "{Es} usual order is {V}.", "{E} always orders {V}.", "{Es} go-to drink is {V}.",
			"{E} prefers {V}.",
		},
		details: []detailTpl{
			{"{E} gets coffee from {D}.", 1, []string{"the corner cafe", "the office kitchen", "Blue Door Coffee"}},
			{"{E} avoids caffeine after {D}.", 2, []string{"noon", "2 pm", "4 pm"}},
		},
	},
	{
		name: "learning", classes: classUser, mtype: "fact",
		values: []string{"Spanish", "Japanese", "Portuguese", "Korean", "Dutch", "Italian", "Mandarin", "German"},
		claims: []string{
			"{E} is learning {V}.", "{E} studies {V}.", "{E} is taking {V} lessons.", "{E} practises {V}.",
			"{E} has started learning {V}.",
		},
		details: []detailTpl{
			{"{E} practises {V} with {D}.", 2, []string{"Duolingo", "a tutor", "podcasts"}},
			{"{E} wants to reach {D} level in {V}.", 1, []string{"B1", "B2", "conversational"}},
		},
	},
	{
		name: "vacation", classes: classUser, mtype: "event",
		values: []string{
			"two weeks in Japan in March", "a road trip through Portugal in May", "a week in Iceland in June",
			"a ski trip in the Alps in February", "a beach week in Greece in September", "a hiking trip in Patagonia in April",
		},
		claims: []string{
			"{Es} next vacation is {V}.", "{E} is planning {V}.", "{E} has booked {V}.", "{Es} upcoming trip is {V}.",
			"{E} will take {V}.",
		},
		details: []detailTpl{
			{"{E} needs to renew the {D} before the trip.", 2, []string{"passport", "travel insurance", "visa"}},
			{"{E} wants restaurant tips for {V}.", 1, nil},
		},
	},
	{
		name: "partner", classes: classUser, mtype: "relation", decay: "relationship", valueEntity: true,
		values: personValues,
		claims: []string{
			"{Es} partner is {V}.", "{E} lives with a partner, {V}.", "{E} is in a relationship with {V}.",
			"{V} is {Es} partner.", "{E} and {V} are partners.",
		},
		details: []detailTpl{
			{"{V} works as a {D}.", 2, []string{"nurse", "teacher", "architect", "chef"}},
			{"{E} and {V} have been together since {D}.", 1, []string{"2016", "2018", "2020"}},
		},
	},
	{
		name: "birthday", classes: classPerson, mtype: "event",
		gen: func(r *rng, _ *entity) string { return genDay(r) },
		claims: []string{
			"{Es} birthday is on {V}.", "{E} was born on {V}.", "{E} celebrates a birthday on {V}.",
			"{Es} birthday falls on {V}.", "{V} is {Es} birthday.",
		},
		details: []detailTpl{
			{"{E} likes {D} as a birthday gift.", 2, []string{"books", "plants", "board games", "coffee beans"}},
			{"The team usually gets {E} a {D} cake.", 1, []string{"chocolate", "carrot", "lemon", "cheese"}},
		},
	},
	{
		name: "relation", classes: classPerson, mtype: "relation", decay: "relationship",
		values: []string{
			"sister", "brother", "college friend", "teammate", "landlord", "neighbour", "former colleague",
			"cousin", "mentor", "accountant",
		},
		claims: []string{
			"{E} is the user's {V}.", "The user's {V} is {E}.", "{E} is a {V} of the user.",
			"The user describes {E} as a {V}.", "{E} is known to the user as a {V}.",
		},
		details: []detailTpl{
			{"The user met {E} in {D}.", 2, []string{"2015", "2019", "college", "a conference", "a climbing gym"}},
			{"The user sees {E} about {D}.", 1, []string{"once a week", "once a month", "twice a year"}},
		},
	},
	{
		name: "pet", classes: classPerson, mtype: "fact",
		values: []string{
			"a border collie", "two cats", "a golden retriever", "a rabbit", "a parrot", "a dachshund",
			"an aquarium", "a tortoise",
		},
		claims: []string{
			"{E} has {V}.", "{E} lives with {V}.", "{E} owns {V}.", "At home {E} has {V}.",
			"{Es} household includes {V}.",
		},
		details: []detailTpl{
			{"{E} asks {D} to look after {V} when travelling.", 1, []string{"a neighbour", "a sister", "a friend"}},
			{"{E} walks or feeds {V} before {D}.", 1, []string{"work", "breakfast", "the first meeting"}},
		},
	},
	{
		name: "launch_date", classes: classProject, mtype: "event", decay: "project_status", gen: func(r *rng, _ *entity) string { return genFutureDate(r) },
		claims: []string{
			"{E} launches on {V}.", "{Es} launch date is {V}.", "{E} is scheduled to launch on {V}.",
			"The launch of {E} is set for {V}.", "{E} goes live on {V}.",
		},
		details: []detailTpl{
			{"{Es} launch needs sign-off from {D}.", 2, []string{"legal", "security", "the CFO", "marketing"}},
			{"{Es} launch will be announced on {D}.", 1, []string{"the blog", "the newsletter", "social media"}},
		},
	},
	{
		name: "status", classes: classProject, mtype: "event", decay: "project_status",
		values: []string{
			"blocked on legal review", "in private beta", "paused until Q2", "in code freeze",
			"waiting on the security audit", "two weeks behind schedule", "on track", "in user testing",
			"being rewritten",
		},
		claims: []string{
			"{E} is {V}.", "{Es} status: {V}.", "Right now {E} is {V}.", "Latest on {E}: {V}.", "{E} is currently {V}.",
		},
		details: []detailTpl{
			{"{Es} next status review is on {D}.", 1, weekdays},
			{"{Es} main risk is {D}.", 2, []string{"staffing", "vendor delays", "scope creep", "the data migration"}},
		},
	},
	{
		name: "stack", classes: classProject, mtype: "fact", decay: "technical",
		values: []string{
			"Go and PostgreSQL", "Python with FastAPI", "TypeScript and Next.js", "Rust and SQLite",
			"Java with Spring Boot", "Elixir and Phoenix", "Kotlin and Ktor", "Ruby on Rails",
		},
		claims: []string{
			"{E} is built with {V}.", "{Es} tech stack is {V}.", "{E} runs on {V}.", "{E} uses {V}.",
			"The codebase of {E} is {V}.",
		},
		details: []detailTpl{
			{"{E} uses {D} for its message queue.", 2, []string{"Kafka", "RabbitMQ", "NATS", "SQS"}},
			{"{Es} tests run on {D}.", 1, []string{"GitHub Actions", "GitLab CI", "Buildkite", "CircleCI"}},
			{"{E} caches with {D}.", 2, []string{"Redis", "Memcached", "an in-process LRU"}},
		},
	},
	{
		name: "budget", classes: classProject, mtype: "fact", decay: "price",
		gen: func(r *rng, _ *entity) string { return genMoney(r, 20000, 400000, 5000) },
		claims: []string{
			"{Es} budget is {V}.", "{E} has a budget of {V}.", "{E} is funded with {V}.", "The budget for {E} is {V}.",
			"{E} may spend up to {V}.",
		},
		details: []detailTpl{
			{"{Es} budget is reviewed every {D}.", 1, []string{"quarter", "month", "six months"}},
			{"Most of {Es} budget goes to {D}.", 2, []string{"contractors", "cloud costs", "licences", "hardware"}},
		},
	},
	{
		name: "lead", classes: classProject, mtype: "relation", decay: "relationship", valueEntity: true,
		values: personValues,
		claims: []string{
			"{E} is led by {V}.", "{Es} lead is {V}.", "{V} leads {E}.", "{V} runs {E}.", "{V} is in charge of {E}.",
		},
		details: []detailTpl{
			{"{V} holds the {E} planning meeting on {D}.", 1, weekdays},
			{"{V} reports {Es} progress to {D}.", 2, []string{"the CTO", "the board", "the VP of engineering"}},
		},
	},
	{
		name: "repo", classes: classProject, mtype: "entity", decay: "technical",
		gen: func(r *rng, e *entity) string {
			orgs := []string{"acme", "platform", "core", "labs", "infra"}
			sfx := []string{"", "-api", "-app", "-service", "-monorepo"}
			return "github.com/" + orgs[r.intn(len(orgs))] + "/" + e.handle + sfx[r.intn(len(sfx))]
		},
		claims: []string{
			"{Es} code is in {V}.", "{Es} repository is {V}.", "{E} lives in the repo {V}.",
			"The source of {E} is at {V}.", "{E} is kept in {V}.",
		},
		details: []detailTpl{
			{"{Es} repository requires {D} for merges.", 2, []string{"two approvals", "a green CI run", "signed commits"}},
			{"{Es} default branch is {D}.", 1, []string{"main", "trunk", "develop"}},
		},
	},
	{
		name: "channel", classes: classProject, mtype: "entity", decay: "contact",
		gen: func(r *rng, e *entity) string {
			switch r.intn(3) {
			case 0:
				return "#proj-" + e.handle
			case 1:
				return "#" + e.handle + "-dev"
			default:
				return "#team-" + e.handle
			}
		},
		claims: []string{
			"{Es} Slack channel is {V}.", "{E} is discussed in {V}.", "Questions about {E} go to {V}.",
			"The {E} team talks in {V}.", "{E} has the chat channel {V}.",
		},
		details: []detailTpl{
			{"{Es} channel has a {D} standup.", 1, []string{"daily async", "weekly"}},
			{"{Es} on-call rotation is posted in {D}.", 2, []string{"the channel topic", "a pinned message", "PagerDuty"}},
		},
	},
	{
		name: "milestone", classes: classProject, mtype: "event", decay: "project_status",
		gen: func(r *rng, _ *entity) string {
			steps := []string{"the public beta", "the API freeze", "the data migration", "the first customer pilot", "the design review", "the load test"}
			return steps[r.intn(len(steps))] + " on " + genFutureDate(r)
		},
		claims: []string{
			"{Es} next milestone is {V}.", "Next up for {E}: {V}.", "{E} is working towards {V}.",
			"The next {E} milestone is {V}.", "{E} has {V} coming up.",
		},
		details: []detailTpl{
			{"{Es} milestones are tracked in {D}.", 1, []string{"Linear", "Jira", "a spreadsheet", "Notion"}},
			{"{Es} milestone owner is {D}.", 2, personValues},
		},
	},
	{
		name: "hosting", classes: classProject, mtype: "fact", decay: "technical",
		values: []string{
			"AWS ECS", "Google Kubernetes Engine", "Fly.io", "Hetzner servers", "Vercel", "Render",
			"Azure App Service", "a bare-metal rack",
		},
		claims: []string{
			"{E} is deployed on {V}.", "{E} runs in production on {V}.", "{Es} production hosting is {V}.",
			"{E} is hosted on {V}.", "{E} ships to {V}.",
		},
		details: []detailTpl{
			{"{Es} production region is {D}.", 2, []string{"eu-west-1", "us-east-1", "Frankfurt", "Iowa"}},
			{"{E} deploys {D}.", 1, []string{"on every merge", "twice a week", "on Tuesdays only"}},
		},
	},
	{
		name: "cloud_cost", classes: classProject, mtype: "fact", decay: "price",
		gen: func(r *rng, _ *entity) string { return genMoney(r, 300, 25000, 100) + " a month" },
		claims: []string{
			"{Es} cloud bill is {V}.", "{E} costs {V} to run.", "Running {E} costs {V}.", "{Es} hosting costs are {V}.",
			"{E} spends {V} on infrastructure.",
		},
		details: []detailTpl{
			{"{Es} biggest cost is {D}.", 2, []string{"the database", "egress", "GPUs", "logging"}},
			{"{Es} bill is paid from the {D} account.", 1, []string{"engineering", "research", "shared"}},
		},
	},
	{
		name: "opinion_project", classes: classProject, mtype: "preference", decay: "opinion",
		values: []string{
			"overengineered", "the team's best work", "worth finishing", "a distraction", "underfunded",
			"too ambitious", "going well", "a maintenance burden",
		},
		claims: []string{
			"The user thinks {E} is {V}.", "In the user's view {E} is {V}.", "The user considers {E} {V}.",
			"The user feels {E} is {V}.", "According to the user, {E} is {V}.",
		},
		details: []detailTpl{
			{"The user complained about {Es} {D}.", 1, []string{"test suite", "deadlines", "on-call load", "documentation"}},
			{"The user would cut {Es} {D} first.", 2, []string{"admin panel", "mobile app", "reporting", "plugin system"}},
		},
	},
	{
		name: "price", classes: classTool, mtype: "fact", decay: "price",
		gen: func(r *rng, _ *entity) string { return genMoney(r, 4, 60, 1) },
		claims: []string{
			"{E} costs {V} per seat per month.", "{Es} price is {V} per user per month.", "The team pays {V} per seat for {E}.",
			"{E} is {V} a seat monthly.", "A seat of {E} costs {V} a month.",
		},
		details: []detailTpl{
			{"{E} is billed {D}.", 1, []string{"annually", "monthly", "quarterly"}},
			{"The {E} invoice goes to {D}.", 2, []string{"finance", "the user", "the team lead"}},
		},
	},
	{
		name: "plan", classes: classTool, mtype: "fact", decay: "price",
		values: []string{"Free", "Starter", "Team", "Business", "Enterprise", "Pro", "Growth", "Plus"},
		claims: []string{
			"The team is on the {V} plan of {E}.", "{E} subscription: {V} plan.", "The team uses the {E} {V} tier.",
			"{Es} plan is {V}.", "The team has {E} {V}.",
		},
		details: []detailTpl{
			{"{Es} {V} plan includes {D}.", 2, []string{"SSO", "audit logs", "unlimited seats", "priority support"}},
			{"The {E} plan was chosen by {D}.", 1, []string{"the user", "the team lead", "procurement"}},
		},
	},
	{
		name: "version", classes: classTool, mtype: "fact", decay: "technical",
		gen: func(r *rng, _ *entity) string { return itoa(1+r.intn(12)) + "." + itoa(r.intn(20)) },
		claims: []string{
			"The team runs {E} {V}.", "{E} is on version {V}.", "The installed {E} version is {V}.", "{Es} version is {V}.",
			"The team upgraded {E} to {V}.",
		},
		details: []detailTpl{
			{"{E} upgrades are done by {D}.", 1, []string{"the platform team", "the user", "a bot"}},
			{"{E} {V} needed a config change for {D}.", 2, []string{"SSO", "plugins", "storage"}},
		},
	},
	{
		name: "setup", classes: classTool, mtype: "preference", decay: "preference",
		values: []string{
			"dark theme", "vim keybindings", "compact layout", "notifications off", "keyboard shortcuts only",
			"the timeline view", "daily digest emails", "large fonts",
		},
		claims: []string{
			"The user likes {E} with {V}.", "The user sets up {E} with {V}.", "The user prefers {V} in {E}.",
			"In {E} the user uses {V}.", "The user configures {E} for {V}.",
		},
		details: []detailTpl{
			{"The user shares the {E} settings with {D}.", 1, []string{"the team", "nobody"}},
			{"The user asked how to export {E} settings to {D}.", 1, []string{"a new laptop", "a colleague"}},
		},
	},
	{
		name: "opinion_tool", classes: classTool, mtype: "preference", decay: "opinion",
		values: []string{
			"slow but reliable", "indispensable", "clunky", "overpriced", "easy to learn", "hard to configure",
			"great for small teams", "too noisy",
		},
		claims: []string{
			"The user finds {E} {V}.", "The user thinks {E} is {V}.", "In the user's opinion {E} is {V}.",
			"The user says {E} is {V}.", "The user's take: {E} is {V}.",
		},
		details: []detailTpl{
			{"The user compared {E} with {D}.", 2, toolNames},
			{"The user filed a feedback ticket about {Es} {D}.", 1, []string{"search", "pricing", "performance"}},
		},
	},
	{
		name: "admin", classes: classTool, mtype: "entity", decay: "contact",
		gen: func(r *rng, _ *entity) string {
			h := []string{"admin", "it", "ops", "platform", "tools", "helpdesk"}
			d := []string{"acme.io", "corp.example", "team.example"}
			return h[r.intn(len(h))] + "-" + itoa(1+r.intn(9)) + "@" + d[r.intn(len(d))]
		},
		claims: []string{
			"{Es} admin contact is {V}.", "For {E} access, contact {V}.", "{E} is administered by {V}.",
			"Ask {V} for {E} licences.", "The {E} admin can be reached at {V}.",
		},
		details: []detailTpl{
			{"{E} access requests take about {D}.", 1, []string{"a day", "two days", "a week"}},
			{"{E} access needs approval from {D}.", 2, []string{"a manager", "security", "the team lead"}},
		},
	},
	{
		name: "purpose", classes: classTool, mtype: "fact",
		values: []string{
			"incident dashboards", "sprint planning", "design reviews", "error tracking", "infrastructure provisioning",
			"meeting notes", "customer analytics", "on-call alerts",
		},
		claims: []string{
			"The team uses {E} for {V}.", "{E} is used for {V}.", "{Es} main use is {V}.",
			"The team relies on {E} for {V}.", "{E} handles {V}.",
		},
		details: []detailTpl{
			{"The user set up {E} for {V} in {M}.", 2, nil},
			{"{E} is shared with {D}.", 1, []string{"the whole company", "two teams", "contractors"}},
		},
	},
	{
		name: "renewal", classes: classTool, mtype: "event",
		gen: func(r *rng, _ *entity) string { return genFutureDate(r) },
		claims: []string{
			"{Es} subscription renews on {V}.", "{E} renews on {V}.", "The {E} contract renews on {V}.",
			"{Es} renewal date is {V}.", "{E} is up for renewal on {V}.",
		},
		details: []detailTpl{
			{"The {E} renewal needs {D}.", 2, []string{"a new quote", "budget approval", "a security review"}},
			{"The user wants a reminder before the {E} renewal.", 1, nil},
		},
	},
	{
		name: "self_host", classes: classTool, mtype: "fact", decay: "technical",
		values: []string{
			"a Kubernetes cluster", "a single VM", "the office server", "Docker Compose on a VPS",
			"the managed cloud offering", "a Nomad cluster",
		},
		claims: []string{
			"{E} is hosted on {V}.", "{E} runs on {V}.", "The team runs {E} on {V}.", "{Es} deployment is {V}.",
			"{E} is deployed to {V}.",
		},
		details: []detailTpl{
			{"{E} is backed up {D}.", 2, []string{"nightly", "weekly", "hourly"}},
			{"{E} was migrated in {M}.", 1, nil},
		},
	},
}

// episodeTpls are one-off events, the bulk of a real memory store: not
// attributes anyone asks about later, but near distractors for the entity's
// questions. {X} is an event, {W} a date.
var episodeTpls = map[class][]string{
	classUser: {
		"{E} mentioned {X} on {W}.", "On {W} {E} talked about {X}.", "{E} had {X} on {W}.",
	},
	classPerson: {
		"{E} mentioned {X} on {W}.", "On {W} the user said {E} had {X}.", "{E} had {X} on {W}.",
	},
	classProject: {
		"{E} had {X} on {W}.", "On {W} {E} went through {X}.",
	},
	classTool: {
		"{E} had {X} on {W}.", "On {W} the team noticed {X} in {E}.",
	},
}

var episodeEvents = map[class][]string{
	classUser: {
		"a dentist appointment", "a delayed flight", "a job interview", "a team offsite", "a bad cold",
		"a conference talk", "a house viewing", "a car repair", "a family dinner", "a concert",
		"a long code review", "a production incident", "a performance review", "a hackathon",
		"a broken laptop screen", "a visa appointment", "a marathon", "a power cut",
	},
	classPerson: {
		"a job interview", "a conference talk", "a delayed flight", "a birthday party", "a product demo",
		"a sick day", "a team offsite", "a move to a new flat", "a hackathon", "a customer visit",
		"a broken laptop", "a wedding",
	},
	classProject: {
		"a retrospective", "an outage", "a scope change", "a design review", "a failed deploy",
		"a customer escalation", "a security finding", "a demo to leadership", "a planning poker session",
		"a load test",
	},
	classTool: {
		"an outage", "a billing error", "a breaking upgrade", "a slow dashboard", "a login problem",
		"a data export", "a permission mix-up", "a price increase notice",
	},
}

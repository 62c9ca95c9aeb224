package main

import "math"

// Vectors are sums of latent unit directions with per-vector random
// amplitudes, normalised:
//
//   - a: one anisotropy direction every vector shares (embedding models give
//     unrelated texts a positive mean cosine);
//   - E: one direction per entity;
//   - a, E are orthonormal; every other direction is a random unit vector in
//     their orthogonal complement R (so random directions overlap by chance,
//     with cosines of about 1/sqrt(dim(R)), as real embeddings do);
//   - K: one per topic kind (the attribute asked about: "employer"), shared
//     by the query and the claims of every entity's topic of that kind;
//   - T: one per topic (entity x attribute), shared by the query and the
//     topic's memories;
//   - S: one per topic, shared by the claims of the topic only (the form of
//     a statement "X works at Y", which a question does not have);
//   - V: one per value (answer, outdated value, wrong speculation);
//   - D, N: one per detail or memory or query (its own content and wording).
//
// A claim's vector is its fact's centre F (a, E, K, T, S, V) moved away by
// a wording direction orthogonal to F: m = c F + sqrt(1-c^2) w. Duplicates
// of one fact use mutually orthogonal wordings, so the cosine between the
// answer (c0) and a duplicate (c) is exactly c0 c before rounding; an exact
// textual copy is the answer itself moved by tau.
type shape struct {
	// query: anisotropy, entity, kind, topic, own wording
	qA, qE, qK, qT, qN float64
	// claim centre: anisotropy, entity, kind, topic, statement, value
	mA, mE, mK, mT, mS, mV float64
	// answer and outdated value: closeness c to the fact centre, uniform
	cLo, cHi float64
	// detail: kind, topic, own content, wording
	dK, dT, dD, dN float64
	// speculation: kind, topic, statement, value, wording
	sK, sT, sS, sV, sN float64
	// episode: own topic, wording
	eT, eN float64
	// how specifically a query is worded: its kind and topic part is rho
	// (K, T) + sqrt(1-rho^2) |(K, T)| U for a random direction U, with rho
	// normal (mean, sd) clamped to [min, 1]
	rhoMean, rhoSD, rhoMin float64
	// per-amplitude log-normal jitter of memories and queries
	jitter, qJitter float64
}

// theShape holds the amplitudes, tuned so that the realised similarities
// meet the targets (see stats.go and the README). They are not tuned for any
// ranking method.
var theShape = shape{
	qA: 0.385, qE: 0.48, qK: 0.416, qT: 0.50, qN: 0.45,
	rhoMean: 0.84, rhoSD: 0.18, rhoMin: 0.30,
	mA: 0.39, mE: 0.48, mK: 0.30, mT: 0.35, mS: 0.50, mV: 0.35,
	cLo: 0.972, cHi: 0.982,
	dK: 0.15, dT: 0.16, dD: 0.60, dN: 0.40,
	sK: 0.30, sT: 0.25, sS: 0.35, sV: 0.35, sN: 0.45,
	eT: 0.60, eN: 0.50,
	jitter: 0.08, qJitter: 0.08,
}

type vecGen struct {
	r     *rng
	dim   int
	basis [][]float64 // a, then one per entity
}

func (g *vecGen) gauss() []float64 {
	v := make([]float64, g.dim)
	for i := range v {
		v[i] = g.r.norm()
	}
	return v
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// axpy adds s*x to y.
func axpy(s float64, x, y []float64) {
	for i := range y {
		y[i] += s * x[i]
	}
}

func normalise(v []float64) []float64 {
	n := math.Sqrt(dot(v, v))
	for i := range v {
		v[i] /= n
	}
	return v
}

// orth removes from v its components along the unit vectors us.
func orth(v []float64, us ...[]float64) []float64 {
	for _, u := range us {
		axpy(-dot(v, u), u, v)
	}
	return v
}

// inR is a random unit direction in the complement of the basis.
func (g *vecGen) inR() []float64 {
	return normalise(orth(g.gauss(), g.basis...))
}

// jit is a log-normal amplitude multiplier.
func (g *vecGen) jit(s float64) float64 { return math.Exp(s * g.r.norm()) }

// comb is the normalised sum of amplitude x direction pairs, each amplitude
// jittered.
func (g *vecGen) comb(s float64, parts ...any) []float64 {
	v := make([]float64, g.dim)
	for i := 0; i < len(parts); i += 2 {
		axpy(parts[i].(float64)*g.jit(s), parts[i+1].([]float64), v)
	}
	return normalise(v)
}

// moved is c x + sqrt(1-c^2) w for a unit direction w orthogonal to x and to
// the unit vectors others (Gram-Schmidt on a random direction in R); it
// returns the vector and w.
func (g *vecGen) moved(x []float64, c float64, others ...[]float64) ([]float64, []float64) {
	w := g.inR()
	w = orth(w, x)
	w = normalise(orth(w, others...))
	w = normalise(orth(w, x)) // once more against x, for rounding
	out := make([]float64, g.dim)
	axpy(c, x, out)
	axpy(math.Sqrt(1-c*c), w, out)
	return out, w
}

func round4(x float64) float64 {
	v := math.Round(x*1e4) / 1e4
	if v == 0 {
		return 0 // no negative zero
	}
	return v
}

func rounded(v []float64) []float64 {
	for i := range v {
		v[i] = round4(v[i])
	}
	return v
}

func (d *dataset) buildVectors(r *rng) {
	sh := theShape
	g := &vecGen{r: r, dim: d.cfg.Dim}
	// Orthonormal anisotropy and entity directions.
	for range 1 + len(d.entities) {
		g.basis = append(g.basis, normalise(orth(g.gauss(), g.basis...)))
	}
	a := g.basis[0]
	kdir := map[*kind][]float64{} // look-ups only
	for _, k := range kinds {
		kdir[k] = g.inR()
	}
	for _, t := range d.topics {
		t.dirT = g.inR()
		if !t.episode && !t.unanswerable {
			t.dirS = g.inR()
			for i := range t.dirV {
				t.dirV[i] = g.inR()
			}
		}
	}
	for _, t := range d.topics {
		E := g.basis[1+t.entIdx]
		if t.queried {
			rho := math.Min(1, math.Max(sh.rhoMin, sh.rhoMean+sh.rhoSD*g.r.norm()))
			off := math.Sqrt((1 - rho*rho) * (sh.qK*sh.qK + sh.qT*sh.qT))
			t.queryVec = rounded(g.comb(sh.qJitter, sh.qA, a, sh.qE, E, rho*sh.qK, kdir[t.kind], rho*sh.qT, t.dirT,
				off, g.inR(), sh.qN, g.inR()))
		}
		if t.episode {
			m := t.mems[0]
			m.vec = rounded(g.comb(sh.jitter, sh.mA, a, sh.mE, E, sh.eT, t.dirT, sh.eN, g.inR()))
			continue
		}
		if t.unanswerable {
			continue
		}
		centre := func(slot int) []float64 {
			return g.comb(sh.jitter, sh.mA, a, sh.mE, E, sh.mK, kdir[t.kind], sh.mT, t.dirT, sh.mS, t.dirS, sh.mV, t.dirV[slot])
		}
		var ansF, ansVec []float64
		var ansC float64
		var wordings [][]float64
		for _, m := range t.mems {
			switch m.sub {
			case subAnswer:
				ansF = centre(m.valueSlot)
				ansC = g.r.uniform(sh.cLo, sh.cHi)
				var w []float64
				ansVec, w = g.moved(ansF, ansC)
				wordings = append(wordings, w)
				m.vec = ansVec
			case subDup, subDupLoose:
				// Capped so that the duplicate stays a wording of the fact,
				// as near the centre as the answer at most.
				v, w := g.moved(ansF, math.Min(m.tau/ansC, 0.999), wordings...)
				wordings = append(wordings, w)
				m.vec = v
			case subDupCopy:
				m.vec, _ = g.moved(normalise(append([]float64(nil), ansVec...)), m.tau)
			case subOutdated, subSuperseded:
				m.vec, _ = g.moved(centre(m.valueSlot), g.r.uniform(sh.cLo, sh.cHi))
			case subDetail:
				m.vec = g.comb(sh.jitter, sh.mA, a, sh.mE, E, sh.dK, kdir[t.kind], sh.dT, t.dirT, sh.dD, g.inR(), sh.dN, g.inR())
			case subSpeculation:
				m.vec = g.comb(sh.jitter, sh.mA, a, sh.mE, E, sh.sK, kdir[t.kind], sh.sT, t.dirT, sh.sS, t.dirS, sh.sV, t.dirV[m.valueSlot], sh.sN, g.inR())
			}
		}
		for _, m := range t.mems {
			m.vec = rounded(m.vec)
		}
	}
}

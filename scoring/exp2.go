package scoring

import "math"

// exp2Table holds 2^(j/64) for j in [0, 64): read-only data computed once.
var exp2Table = func() (t [64]float64) {
	for j := range t {
		t[j] = math.Exp2(float64(j) / 64)
	}
	return t
}()

// halfPow returns 2^y for y <= 0 (freshness is 0.5^(age/half-life)). It is
// math.Exp2 to within 2 ulp, about three times faster: freshness is computed
// for every candidate of every read. y = n + j/64 + r with |r| <= 1/128, so a
// fifth-order Taylor polynomial of 2^r is exact to ~4e-17.
func halfPow(y float64) float64 {
	switch {
	case y == 0:
		return 1
	case !(y > -1022): // NaN, or past the normal range: defer to the library
		if math.IsNaN(y) {
			return 1
		}
		return math.Exp2(y)
	}
	k := math.Floor(y*64 + 0.5)
	x := (y - k/64) * math.Ln2
	p := 1 + x*(1+x*(1.0/2+x*(1.0/6+x*(1.0/24+x*(1.0/120)))))
	ki := int64(k)
	n := ki >> 6 // floor division: ki is negative or zero
	j := ki & 63
	return exp2Table[j] * p * math.Float64frombits(uint64(1023+n)<<52)
}

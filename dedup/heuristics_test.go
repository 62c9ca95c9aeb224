package dedup

import "testing"

// TestDifferInClaim: the pairs the write path never merges on similarity
// alone, and those it may.
func TestDifferInClaim(t *testing.T) {
	tests := []struct {
		name   string
		a, b   string
		differ bool
	}{
		{"negation", "I work at Acme", "I don't work at Acme", true},
		{"negations that agree", "Doesn't eat meat", "Does not eat meat", false},
		{"number", "Has two kids", "Has three kids", true},
		{"digits", "Standup is at 9:30", "Standup is at 10:00", true},
		{"same number", "Has 2 kids", "Has 2 kids now", false},
		{"a number in words and in digits", "Has three kids", "Has 3 kids", false},
		{"an ordinal", "Lives on the third floor", "Lives on the fourth floor", true},
		{"value swapped", "Uses tabs for indentation", "Uses spaces for indentation", true},
		{"name swapped", "Her manager is Priya", "Her manager is Tom", true},
		{"prefix negation", "Lucia likes cats", "Lucia dislikes cats", true},
		{"synonym swapped", "Prefers green tea", "Likes green tea", true},
		{"pronoun for a name", "Dana prefers green tea", "She prefers green tea", false},
		{"plural", "Collects stamp", "Collects stamps", false},
		{"two words changed", "Drinks coffee every morning", "Has coffee each morning", false},
		{"a word added", "Drinks coffee", "Drinks coffee daily", false},
		{"case and punctuation", "Drinks coffee.", "drinks Coffee", false},
		{"one word", "Coffee", "Tea", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := differInClaim(tt.a, tt.b); got != tt.differ {
				t.Errorf("differInClaim(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.differ)
			}
			if got := differInClaim(tt.b, tt.a); got != tt.differ {
				t.Errorf("differInClaim(%q, %q) = %v, want %v (symmetric)", tt.b, tt.a, got, tt.differ)
			}
		})
	}
}

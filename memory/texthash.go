package memory

import (
	"encoding/hex"

	"github.com/zeebo/xxh3"

	"github.com/memrank/memrank/textnorm"
)

// TextHash is the tier-1 dedup key: the hex XXH3-128 of the normalised text
// (textnorm.Normalize). XXH3 is stable across processes and machines
// (unlike hash/maphash), so the hash can be stored in the payload and
// indexed.
func TextHash(text string) string {
	h := xxh3.HashString128(textnorm.Normalize(text)).Bytes()
	return hex.EncodeToString(h[:])
}

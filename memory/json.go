package memory

import (
	"github.com/memrank/memrank/qdrantjson"
)

// DecodeJSON reads a memory from a JSON object with the configured keys (a
// payload as qdrantjson.DecodePayload reads it: integers and floats stay
// distinct). The error is only for input that is not one JSON object
// (qdrantjson.ErrNotObject) or holds a number beyond float64; field-level
// trouble goes to m.Problems like every decode.
func (c *Codec) DecodeJSON(data []byte, m *Memory) error {
	payload, err := qdrantjson.DecodePayload(data)
	if err != nil {
		*m = Memory{}
		return err
	}
	c.Decode(payload, m)
	return nil
}

// EncodeJSON writes the record as a JSON object with the configured keys.
func (c *Codec) EncodeJSON(m *Memory) []byte {
	return qdrantjson.AppendPayload(nil, c.Encode(m))
}

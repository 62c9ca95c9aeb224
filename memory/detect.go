package memory

import "github.com/qdrant/go-client/qdrant"

// A memory collection is recognised from its points' payloads alone, with
// no configuration: by memrank's schema marker, or by the memory record's
// distinctive fields together. Fields that plain collections also carry
// (text, created_at, user_id, a hash, access counts that an older memrank
// wrote into every point it returned) never count, so a LangChain, Mastra or
// mem0 collection is not mistaken for one.

// DetectKeys are the payload keys IsMemoryRecord reads: a scroll that
// samples a collection to recognise it needs only these.
func (c *Codec) DetectKeys() []string {
	return []string{
		c.keys[FieldSchema], c.keys[FieldMemoryType], c.keys[FieldSource],
		c.keys[FieldExtractorModel], c.keys[FieldExtractorLogprob], c.keys[FieldConfidence],
	}
}

// IsMemoryRecord reports whether a payload is a memrank memory record: it
// carries the schema marker (memrank_schema), or a memory type and a source
// level together with an extractor (model or log-probability) or a stored
// confidence. Null values do not count. Memory.IsRecord says the same of a
// decoded record.
func (c *Codec) IsMemoryRecord(payload map[string]*qdrant.Value) bool {
	has := func(f Field) bool {
		v, ok := payload[c.keys[f]]
		return ok && !isNull(v)
	}
	if has(FieldSchema) {
		return true
	}
	return has(FieldMemoryType) && has(FieldSource) &&
		(has(FieldExtractorModel) || has(FieldExtractorLogprob) || has(FieldConfidence))
}

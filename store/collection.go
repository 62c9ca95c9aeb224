package store

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/proto"

	"github.com/memrank/memrank/internal/jsonpath"
	"github.com/memrank/memrank/internal/vecmath"
)

// chunkSlots is the number of vectors per slab chunk. The slab is a list of
// contiguous chunks rather than one array so that growing it never copies
// (and never briefly doubles) 150 MB of vectors, and so that the parallel
// scan has natural work units.
const chunkSlots = 1024

// slab holds every vector of a collection in memory, slot after slot.
type slab struct {
	dim    int
	chunks [][]float32
}

func (s *slab) at(slot uint32) []float32 {
	c := s.chunks[slot/chunkSlots]
	off := int(slot%chunkSlots) * s.dim
	return c[off : off+s.dim : off+s.dim]
}

func (s *slab) put(slot uint32, v []float32) {
	for int(slot/chunkSlots) >= len(s.chunks) {
		s.chunks = append(s.chunks, make([]float32, chunkSlots*s.dim))
	}
	copy(s.at(slot), v)
}

// collection is one collection's in-memory state: the vector slab, the slot
// table and the payload indexes. Payloads themselves stay in bbolt (read
// through its mmap when needed), so the Go heap holds vectors and indexes
// only. Everything below mu is guarded by mu, but for overlay and stage.
// A reader holds mu shared for its whole read, bbolt read transaction
// included; the committer (commit.go) holds it exclusively to change
// memory, and either holds it through the commit or publishes an overlay
// first, so readers never see memory and disk disagree.
type collection struct {
	name   string
	dim    int
	metric metric
	config *qdrant.CollectionConfig

	mu       sync.RWMutex
	dropped  bool
	seq      uint64 // last operation id
	vectors  slab
	ids      []PointID // by slot
	versions []uint64  // by slot: operation id of the last write
	live     bitset
	nlive    int
	free     []uint32
	slots    map[PointID]uint32
	indexes  map[string]*fieldIndex // by path string
	// overlay holds, while a payload-only group is being committed without
	// mu, the committed records of the points it rewrites; readers use
	// them instead of bbolt's (see commit.go). It is set before that commit
	// without mu (a reader that began its bbolt transaction after the commit
	// is sure to see it) and cleared under mu exclusively.
	overlay atomic.Pointer[map[PointID][]byte]

	// stage is where the payload write being run by the committer records
	// the points' old records; only the committer (under DB.wmu) uses it.
	stage map[PointID][]byte
}

func newCollection(name string, cfg *qdrant.CollectionConfig, k vecmath.Kernels) (*collection, error) {
	params := cfg.GetParams().GetVectorsConfig().GetParams()
	if params == nil || params.GetSize() == 0 || params.GetSize() > maxDim {
		return nil, fmt.Errorf("collection %q: stored config has no usable vector params", name)
	}
	switch params.GetDistance() {
	case qdrant.Distance_Cosine, qdrant.Distance_Dot, qdrant.Distance_Euclid, qdrant.Distance_Manhattan:
	default:
		return nil, fmt.Errorf("collection %q: stored config has unknown distance %v", name, params.GetDistance())
	}
	dim := int(params.GetSize())
	return &collection{
		name:    name,
		dim:     dim,
		metric:  metric{distance: params.GetDistance(), k: k},
		config:  cfg,
		vectors: slab{dim: dim},
		slots:   map[PointID]uint32{},
		indexes: map[string]*fieldIndex{},
	}, nil
}

// maxDim is Qdrant's VectorParams.size upper bound.
const maxDim = 65536

// record is a point as stored in bbolt: format byte, version (LE u64),
// vector (dim little-endian float32) and the payload as a protobuf-encoded
// qdrant.Struct. Protobuf keeps integer_value and double_value apart, so a
// stored 3.0 comes back as a float and 3 as an integer, as in Qdrant.
const recordFormat = 1

func encodeRecord(version uint64, vec []byte, payload map[string]*qdrant.Value) ([]byte, error) {
	pb, err := proto.MarshalOptions{Deterministic: true}.Marshal(&qdrant.Struct{Fields: payload})
	if err != nil {
		return nil, err
	}
	b := make([]byte, 9, 9+len(vec)+len(pb))
	b[0] = recordFormat
	binary.LittleEndian.PutUint64(b[1:], version)
	b = append(b, vec...)
	return append(b, pb...), nil
}

// vecBytes encodes a vector as little-endian float32s.
func vecBytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// recordView is a decoded record header over bytes it does not own.
type recordView struct {
	version uint64
	vec     []byte
	payload []byte
}

func parseRecord(b []byte, dim int) (recordView, error) {
	if len(b) < 9+4*dim || b[0] != recordFormat {
		return recordView{}, fmt.Errorf("corrupt point record (%d bytes)", len(b))
	}
	return recordView{
		version: binary.LittleEndian.Uint64(b[1:]),
		vec:     b[9 : 9+4*dim],
		payload: b[9+4*dim:],
	}, nil
}

func (r recordView) vector(dst []float32) {
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(r.vec[4*i:]))
	}
}

func decodePayload(b []byte) (map[string]*qdrant.Value, error) {
	var s qdrant.Struct
	if err := proto.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	if s.Fields == nil {
		s.Fields = map[string]*qdrant.Value{}
	}
	return s.Fields, nil
}

// allocSlot returns a slot for a new point, reusing freed ones first.
func (c *collection) allocSlot(id PointID) uint32 {
	var slot uint32
	if n := len(c.free); n > 0 {
		slot = c.free[n-1]
		c.free = c.free[:n-1]
		c.ids[slot] = id
	} else {
		slot = uint32(len(c.ids))
		c.ids = append(c.ids, id)
		c.versions = append(c.versions, 0)
	}
	c.slots[id] = slot
	c.live.set(slot)
	c.nlive++
	return slot
}

// putPoint installs a point in memory. vec must already be preprocessed
// (normalised for Cosine). oldPayload (nil for a new point) is needed to
// take the old values out of the payload indexes.
func (c *collection) putPoint(id PointID, version uint64, vec []float32, payload, oldPayload map[string]*qdrant.Value) {
	slot, ok := c.slots[id]
	if ok {
		c.unindex(slot, oldPayload)
	} else {
		slot = c.allocSlot(id)
	}
	c.vectors.put(slot, vec)
	c.versions[slot] = version
	c.index(slot, payload)
}

// setPayloadOnly replaces the indexed view of a point's payload and bumps
// its version; the vector is unchanged.
func (c *collection) setPayloadOnly(slot uint32, version uint64, payload, oldPayload map[string]*qdrant.Value) {
	c.unindex(slot, oldPayload)
	c.versions[slot] = version
	c.index(slot, payload)
}

func (c *collection) removePoint(id PointID, oldPayload map[string]*qdrant.Value) {
	slot, ok := c.slots[id]
	if !ok {
		return
	}
	c.unindex(slot, oldPayload)
	delete(c.slots, id)
	c.live.clear(slot)
	c.nlive--
	c.versions[slot] = 0
	c.ids[slot] = PointID{}
	clear(c.vectors.at(slot))
	c.free = append(c.free, slot)
}

func (c *collection) index(slot uint32, payload map[string]*qdrant.Value) {
	if payload == nil {
		return
	}
	for _, fi := range c.indexes {
		fi.add(slot, payload)
	}
}

func (c *collection) unindex(slot uint32, payload map[string]*qdrant.Value) {
	if payload == nil {
		return
	}
	for _, fi := range c.indexes {
		fi.remove(slot, payload)
	}
}

// payloadSchema answers CollectionInfo.payload_schema.
func (c *collection) payloadSchema() map[string]*qdrant.PayloadSchemaInfo {
	out := make(map[string]*qdrant.PayloadSchemaInfo, len(c.indexes))
	for name, fi := range c.indexes {
		info := proto.Clone(fi.info).(*qdrant.PayloadSchemaInfo)
		n := uint64(fi.points.count())
		info.Points = &n
		out[name] = info
	}
	return out
}

// mustPath parses a persisted index path.
func mustPath(s string) (jsonpath.Path, error) {
	p, err := jsonpath.Parse(s)
	if err != nil {
		return jsonpath.Path{}, fmt.Errorf("stored index path %q: %w", s, err)
	}
	return p, nil
}

package store

import (
	"bytes"
	"encoding/binary"
	"strconv"

	"github.com/google/uuid"
	"github.com/qdrant/go-client/qdrant"
)

// PointID is a Qdrant point id: an unsigned integer or a UUID. It is
// comparable (usable as a map key) and orders like Qdrant's ExtendedPointId:
// every numeric id before every UUID, numbers ascending, UUIDs by bytes.
type PointID struct {
	num    uint64
	uuid   [16]byte
	isUUID bool
}

// NumID returns a numeric point id.
func NumID(n uint64) PointID { return PointID{num: n} }

// UUIDID returns a UUID point id.
func UUIDID(u [16]byte) PointID { return PointID{uuid: u, isUUID: true} }

// IsUUID reports whether the id is a UUID.
func (id PointID) IsUUID() bool { return id.isUUID }

// Num returns the numeric value of a numeric id (0 for a UUID).
func (id PointID) Num() uint64 { return id.num }

// String prints the id as Qdrant does in messages: the number, or the
// lower-case hyphenated UUID.
func (id PointID) String() string {
	if id.isUUID {
		return uuid.UUID(id.uuid).String()
	}
	return strconv.FormatUint(id.num, 10)
}

// Compare orders ids like Qdrant's scroll order.
func (id PointID) Compare(o PointID) int {
	switch {
	case id.isUUID != o.isUUID:
		if !id.isUUID {
			return -1
		}
		return 1
	case id.isUUID:
		return bytes.Compare(id.uuid[:], o.uuid[:])
	case id.num < o.num:
		return -1
	case id.num > o.num:
		return 1
	}
	return 0
}

// key is the id's bbolt key. Its byte order is the scroll order: a 0x00 tag
// and the big-endian number, or a 0x01 tag and the UUID bytes.
func (id PointID) key() []byte {
	if id.isUUID {
		k := make([]byte, 17)
		k[0] = 1
		copy(k[1:], id.uuid[:])
		return k
	}
	k := make([]byte, 9)
	binary.BigEndian.PutUint64(k[1:], id.num)
	return k
}

func idFromKey(k []byte) (PointID, bool) {
	switch {
	case len(k) == 9 && k[0] == 0:
		return NumID(binary.BigEndian.Uint64(k[1:])), true
	case len(k) == 17 && k[0] == 1:
		var u [16]byte
		copy(u[:], k[1:])
		return UUIDID(u), true
	}
	return PointID{}, false
}

// Proto converts the id to go-client's PointId.
func (id PointID) Proto() *qdrant.PointId {
	if id.isUUID {
		return qdrant.NewIDUUID(uuid.UUID(id.uuid).String())
	}
	return qdrant.NewIDNum(id.num)
}

// PointIDFromProto converts a go-client PointId, with Qdrant's error texts.
// UUIDs are accepted in every form Rust's uuid crate parses (hyphenated,
// simple, braced, urn).
func PointIDFromProto(p *qdrant.PointId) (PointID, error) {
	switch v := p.GetPointIdOptions().(type) {
	case *qdrant.PointId_Num:
		return NumID(v.Num), nil
	case *qdrant.PointId_Uuid:
		u, err := uuid.Parse(v.Uuid)
		if err != nil {
			return PointID{}, invalidArg("Unable to parse UUID: %s", v.Uuid)
		}
		return UUIDID(u), nil
	}
	return PointID{}, invalidArg("No ID options provided")
}

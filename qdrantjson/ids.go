package qdrantjson

import (
	"strconv"

	"github.com/google/uuid"
	"github.com/qdrant/go-client/qdrant"
)

// Point ids are read from their literal and written with strconv, never
// through float64, so ids above 2^53 keep every digit.

// PointID reads an ExtendedPointId: an unsigned integer or a UUID string
// (any form the uuid crate parses; sent on in the canonical lower-case
// hyphenated form Qdrant answers with).
func PointID(v Value, path string) (*qdrant.PointId, error) {
	switch v.Kind {
	case KindNumber:
		if IsIntLiteral(v.Text) {
			if n, err := strconv.ParseUint(v.Text, 10, 64); err == nil {
				return qdrant.NewIDNum(n), nil
			}
		}
	case KindString:
		if u, err := uuid.Parse(v.Text); err == nil {
			return qdrant.NewIDUUID(u.String()), nil
		}
	}
	return nil, FormatError(path, "value %s is not a valid point ID, valid values are either an unsigned integer or a UUID", v.Describe())
}

// PointIDs reads a list of point ids.
func PointIDs(v Value, path string) ([]*qdrant.PointId, error) {
	if v.Kind != KindArray {
		return nil, TypeError(path, v, "a sequence of point ids")
	}
	items := v.Items()
	ids := make([]*qdrant.PointId, len(items))
	for i, e := range items {
		if e.Kind == KindNumber {
			// The usual id: read without building its path, which only an
			// error needs.
			if n, err := strconv.ParseUint(e.Text, 10, 64); err == nil {
				ids[i] = qdrant.NewIDNum(n)
				continue
			}
		}
		id, err := PointID(e, Index(path, i))
		if err != nil {
			return nil, err
		}
		ids[i] = id
	}
	return ids, nil
}

// ParsePointID reads a point id from a URL path segment.
func ParsePointID(s string) (*qdrant.PointId, bool) {
	if n, err := strconv.ParseUint(s, 10, 64); err == nil {
		return qdrant.NewIDNum(n), true
	}
	if u, err := uuid.Parse(s); err == nil {
		return qdrant.NewIDUUID(u.String()), true
	}
	return nil, false
}

// PointIDString is a point id as memrank's APIs and records show it: the
// number in decimal, or the UUID; "" for nil.
func PointIDString(id *qdrant.PointId) string {
	switch v := id.GetPointIdOptions().(type) {
	case *qdrant.PointId_Num:
		return strconv.FormatUint(v.Num, 10)
	case *qdrant.PointId_Uuid:
		return v.Uuid
	}
	return ""
}

// AppendPointID appends a point id as Qdrant writes it: an integer, or the
// UUID as a string.
func AppendPointID(b []byte, id *qdrant.PointId) []byte {
	switch v := id.GetPointIdOptions().(type) {
	case *qdrant.PointId_Num:
		return strconv.AppendUint(b, v.Num, 10)
	case *qdrant.PointId_Uuid:
		return AppendString(b, v.Uuid)
	}
	return append(b, "null"...)
}

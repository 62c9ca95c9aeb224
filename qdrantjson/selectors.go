package qdrantjson

import "github.com/qdrant/go-client/qdrant"

// WithPayload reads WithPayloadInterface: a bool, a list of fields
// (include), {"include": [...]} or {"exclude": [...]}.
func WithPayload(v Value, path string) (*qdrant.WithPayloadSelector, error) {
	switch v.Kind {
	case KindBool:
		return qdrant.NewWithPayloadEnable(v.Bool), nil
	case KindArray:
		fields, err := Strings(v, path)
		if err != nil {
			return nil, err
		}
		return qdrant.NewWithPayloadInclude(fields...), nil
	case KindObject:
		key := "exclude"
		if v.Has("include") {
			key = "include"
		}
		o, err := ReadObject(v, path, key)
		if err != nil {
			return nil, err
		}
		fv, err := o.Require(key)
		if err != nil {
			return nil, err
		}
		fields, err := Strings(fv, o.Sub(key))
		if err != nil {
			return nil, err
		}
		if key == "include" {
			return qdrant.NewWithPayloadInclude(fields...), nil
		}
		return qdrant.NewWithPayloadExclude(fields...), nil
	}
	return nil, FormatError(path, "invalid type: %s, expected a boolean, an array of strings, or an object with an include/exclude field", v.Describe())
}

package restapi

import (
	"net/http"
	"strconv"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/qdrantjson"
)

// Query parameters (Qdrant's UpdateParams and ReadParams): wait, ordering,
// timeout (seconds) and consistency. Unknown parameters are ignored, as
// serde_urlencoded does.

func paramErr(format string, args ...any) *qdrantjson.Error {
	return qdrantjson.Errorf(qdrantjson.ClassParamFormat, format, args...)
}

func timeoutParam(r *http.Request) (*uint64, error) {
	s := r.URL.Query().Get("timeout")
	if s == "" {
		return nil, nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return nil, paramErr("timeout: invalid digit found in string %q", s)
	}
	if n == 0 {
		return nil, &qdrantjson.Error{Class: qdrantjson.ClassParamValidation, Path: "timeout", Detail: "value 0 invalid, must be 1 or larger"}
	}
	return &n, nil
}

// waitParam reads wait; Qdrant's REST default is false.
func waitParam(r *http.Request) (*bool, error) {
	s := r.URL.Query().Get("wait")
	switch s {
	case "":
		return nil, nil
	case "true":
		t := true
		return &t, nil
	case "false":
		f := false
		return &f, nil
	}
	return nil, paramErr("wait: provided string was not `true` or `false`")
}

func orderingParam(r *http.Request) (*qdrant.WriteOrdering, error) {
	s := r.URL.Query().Get("ordering")
	var t qdrant.WriteOrderingType
	switch s {
	case "":
		return nil, nil
	case "weak":
		t = qdrant.WriteOrderingType_Weak
	case "medium":
		t = qdrant.WriteOrderingType_Medium
	case "strong":
		t = qdrant.WriteOrderingType_Strong
	default:
		return nil, paramErr("ordering: unknown variant `%s`, expected one of `weak`, `medium`, `strong`", s)
	}
	return &qdrant.WriteOrdering{Type: t}, nil
}

func consistencyParam(r *http.Request) (*qdrant.ReadConsistency, error) {
	s := r.URL.Query().Get("consistency")
	switch s {
	case "":
		return nil, nil
	case "all":
		return qdrant.NewReadConsistencyType(qdrant.ReadConsistencyType_All), nil
	case "majority":
		return qdrant.NewReadConsistencyType(qdrant.ReadConsistencyType_Majority), nil
	case "quorum":
		return qdrant.NewReadConsistencyType(qdrant.ReadConsistencyType_Quorum), nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n == 0 {
		return nil, paramErr("consistency: expected a positive integer, `majority`, `quorum` or `all`, got %q", s)
	}
	return qdrant.NewReadConsistencyFactor(n), nil
}

// writeParams are the query parameters of a point write.
type writeParams struct {
	wait     *bool
	ordering *qdrant.WriteOrdering
	timeout  *uint64
}

func (c *call) writeParams() (writeParams, error) {
	var p writeParams
	var err error
	if p.wait, err = waitParam(c.r); err != nil {
		return p, err
	}
	if p.ordering, err = orderingParam(c.r); err != nil {
		return p, err
	}
	p.timeout = c.timeout
	return p, nil
}

func (c *call) consistency() (*qdrant.ReadConsistency, error) {
	return consistencyParam(c.r)
}

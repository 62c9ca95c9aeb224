package grpcfront

import (
	"errors"
	"fmt"
	"io"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/memrank/memrank/memory"
)

// errCompanion is a caller's write to an audit companion. The companion
// (<collection>_memrank_audit) is memrank's record of every decision on the
// write path: a caller that could upsert into it or delete from it could
// forge or erase that record, so through memrank it is read-only. memrank's
// own writes do not pass through the front.
var errCompanion = errors.New("forbidden")

// companionTarget returns the audit companion a write request names: its
// collection_name (field 1 of every Points and Collections write), or the
// collection of an alias it creates.
func companionTarget(method string, req []byte) (string, bool) {
	if method == "/qdrant.Collections/UpdateAliases" {
		var ca qdrant.ChangeAliases
		if proto.Unmarshal(req, &ca) != nil {
			return "an alias change that does not decode", true // fail closed
		}
		// Every name: an alias may not point at a companion, nor take a
		// companion's name (Qdrant resolves an alias before a collection,
		// so a decoy would shadow the audit trail).
		for _, a := range ca.GetActions() {
			for _, name := range []string{
				a.GetCreateAlias().GetCollectionName(), a.GetCreateAlias().GetAliasName(),
				a.GetRenameAlias().GetOldAliasName(), a.GetRenameAlias().GetNewAliasName(),
				a.GetDeleteAlias().GetAliasName(),
			} {
				if memory.IsCompanion(name) {
					return name, true
				}
			}
		}
		return "", false
	}
	name := stringField1(req)
	return name, memory.IsCompanion(name)
}

// stringField1 is the last value of field 1 when it is length-delimited
// (protobuf keeps the last of a repeated scalar); "" otherwise.
func stringField1(b []byte) string {
	name := ""
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return name
		}
		b = b[n:]
		if num == 1 && typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return name
			}
			name = string(v)
			b = b[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return name
		}
		b = b[m:]
	}
	return name
}

// guardCompanions reads a write's request and refuses it when it names an
// audit companion; otherwise the request is kept for whoever serves the
// call next (c.ss replays it).
func (c *call) guardCompanions() error {
	var in frame
	if err := c.ss.RecvMsg(&in); err != nil {
		if errors.Is(err, io.EOF) {
			return errNoRequest
		}
		return err
	}
	if name, ok := companionTarget(c.method, in.b); ok {
		return fmt.Errorf("%w: %.200q is memrank's %s, read-only to callers (memrank alone writes it)", errCompanion, name, memory.CompanionWhat(name))
	}
	c.ss = &replayStream{ServerStream: c.ss, first: &in}
	return nil
}

// replayStream is a server stream whose first message was already read.
type replayStream struct {
	grpc.ServerStream
	first *frame
}

func (s *replayStream) RecvMsg(m any) error {
	if s.first == nil {
		return s.ServerStream.RecvMsg(m)
	}
	f, ok := m.(*frame)
	if !ok {
		return s.ServerStream.RecvMsg(m)
	}
	*f, s.first = *s.first, nil
	return nil
}

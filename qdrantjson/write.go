package qdrantjson

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// Responses are written by appending to a byte slice: the shapes are fixed,
// and this keeps the number formats under control (float32 scores and vector
// components in their shortest float32 form, so 0.9 stays 0.9; float payload
// values always with a fraction or exponent, so 3.0 reads back as a float;
// integers exactly, u64 ids included).

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// AppendFloat64 appends f as a JSON number that reads back as a float: an
// integral value gets ".0". Non-finite values have no JSON form and are
// written as null, as serde_json does.
func AppendFloat64(b []byte, f float64) []byte {
	return appendFloat(b, f, 64)
}

// AppendFloat32 appends f in its shortest float32 form (0.9, not
// 0.8999999761581421), with ".0" when integral.
func AppendFloat32(b []byte, f float32) []byte {
	return appendFloat(b, float64(f), 32)
}

func appendFloat(b []byte, f float64, bits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, 'g', -1, bits)
	for _, c := range b[start:] {
		if c == '.' || c == 'e' || c == 'E' {
			return b
		}
	}
	return append(b, '.', '0')
}

// appendTime appends the envelope's elapsed seconds.
func appendTime(b []byte, secs float64) []byte {
	return strconv.AppendFloat(b, secs, 'g', -1, 64)
}

package native

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/memrank/memrank/dedup"
	"github.com/memrank/memrank/embed"
	"github.com/memrank/memrank/qdrantjson"
)

// POST /v1/embeddings is OpenAI's embeddings API over memrank's embedders,
// so that OpenAI clients (the openai packages, LangChain's
// OpenAIEmbeddings) get the very vectors /v1/observe stores for a text.

// DefaultMaxEmbeddingInputs is the most texts one /v1/embeddings call may
// embed: OpenAI's own limit, so that a client batching for OpenAI fits.
const DefaultMaxEmbeddingInputs = 2048

// maxEmbeddingFloats bounds one answer (texts x dimensions): about 32 MiB
// in base64, whatever the built-in model's size a caller asks for.
const maxEmbeddingFloats = 1 << 23

var embeddingsFields = []string{"model", "input", "encoding_format", "dimensions", "user"}

// EmbeddingsRequest is the body of POST /v1/embeddings:
//
//	{"model": "memrank-local-sem-v1:384",   // optional: the configured embedder
//	 "input": "Dana uses Neovim",           // or ["text", ...], at most 2048
//	 "encoding_format": "float",            // or "base64" (little-endian float32)
//	 "dimensions": 384,                     // optional: the model's size
//	 "user": "..."}                         // accepted and ignored, as OpenAI's
type EmbeddingsRequest struct {
	Model      string
	Input      []string
	Base64     bool
	Dimensions int // 0: the model's own
}

// DecodeEmbeddingsRequest reads a POST /v1/embeddings body, with the parser
// and the strictness of every /v1 body (an unknown key, a value of the
// wrong type are refused naming the field). Token arrays, which OpenAI also
// takes, are refused: memrank's embedders read texts.
func DecodeEmbeddingsRequest(data []byte) (*EmbeddingsRequest, error) {
	req := &EmbeddingsRequest{}
	hasInput := false
	err := decodeObject(data, embeddingsFields, func(key string, v qdrantjson.Value) error {
		var err error
		switch key {
		case "model":
			req.Model, err = jsonString(key, v)
		case "input":
			hasInput = true
			req.Input, err = inputField(v)
		case "encoding_format":
			var f string
			if f, err = jsonString(key, v); err == nil {
				switch f {
				case "float":
				case "base64":
					req.Base64 = true
				default:
					err = inputError(key, "want \"float\" or \"base64\", got %.40q", f)
				}
			}
		case "dimensions":
			req.Dimensions, err = dimensionsField(v)
		case "user":
			_, err = jsonString(key, v)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if !hasInput {
		return nil, inputError("input", "required: a text or an array of texts")
	}
	return req, nil
}

func inputField(v qdrantjson.Value) ([]string, error) {
	const key = "input"
	switch v.Kind {
	case qdrantjson.KindString:
		return []string{v.Text}, nil
	case qdrantjson.KindArray:
	default:
		return nil, inputError(key, "want a text or an array of texts, got %s", kindName(v))
	}
	if v.Nums != nil {
		return nil, inputError(key, "token arrays are not accepted: send texts")
	}
	items := v.Items()
	if len(items) == 0 {
		return nil, inputError(key, "want at least one text")
	}
	out := make([]string, len(items))
	for i, e := range items {
		if e.Kind != qdrantjson.KindString {
			return nil, inputError(qdrantjson.Index(key, i), "want a text, got %s (token arrays are not accepted)", kindName(e))
		}
		out[i] = e.Text
	}
	return out, nil
}

func dimensionsField(v qdrantjson.Value) (int, error) {
	const key = "dimensions"
	if v.Kind != qdrantjson.KindNumber {
		return 0, inputError(key, "want a positive integer, got %s", kindName(v))
	}
	n, err := strconv.Atoi(v.Text)
	if err != nil || n < 1 || n > embed.MaxDimensions {
		return 0, inputError(key, "want an integer from 1 to %d, got %.40s", embed.MaxDimensions, v.Text)
	}
	return n, nil
}

// openAIError is an answer in OpenAI's error shape with its own status,
// param and code (the model not found, a size it cannot make).
type openAIError struct {
	status               int
	message, param, code string
}

func (e *openAIError) Error() string { return e.message }

// embedderNamed is the embedder a /v1/embeddings model names, at dims (0:
// any): the configured one by its full name, by its name without the size,
// or when model is ""; a built-in local model by its full name
// ("memrank-local-sem-v1:384"), or by its bare name at dims (default: the
// configured size when the configured embedder is that model, else 384).
// Each built-in model at one size is a model of its own, not a truncation
// of a larger one, so dims picks among them and never shortens a vector.
func (s *Service) embedderNamed(model string, dims int) (embed.Embedder, error) {
	conf := s.cfg.Embedder
	base, _, full := strings.Cut(model, ":")
	confBase, _, _ := strings.Cut(conf.Model(), ":")
	builtin := !full && (base == embed.SemanticModelVersion || base == embed.LocalModelVersion)
	var emb embed.Embedder
	switch {
	case model == "" || model == conf.Model():
		emb = conf
	case !full && base == confBase && (dims == 0 || dims == conf.Dimensions()):
		emb = conf
	case builtin:
		size := dims
		if size == 0 {
			size = embed.DefaultConfig().Dimensions
		}
		if s.cfg.Embedders != nil {
			emb, _ = s.cfg.Embedders.For(fmt.Sprintf("%s:%d", base, size))
		}
		if emb == nil && s.cfg.Embedders != nil {
			return nil, &openAIError{status: http.StatusBadRequest, param: "dimensions", code: "invalid_value",
				message: fmt.Sprintf("%s cannot make %d-dimensional vectors", base, size)}
		}
	case full && s.cfg.Embedders != nil:
		emb, _ = s.cfg.Embedders.For(model)
	}
	if emb == nil {
		return nil, &openAIError{status: http.StatusNotFound, param: "model", code: "model_not_found",
			message: fmt.Sprintf("The model %.80q does not exist on this server: it embeds with %s (the configured embedder), "+
				"%s[:N] or %s[:N]", model, conf.Model(), embed.SemanticModelVersion, embed.LocalModelVersion)}
	}
	if dims != 0 && dims != emb.Dimensions() {
		return nil, &openAIError{status: http.StatusBadRequest, param: "dimensions", code: "invalid_value",
			message: fmt.Sprintf("%s makes %d-dimensional vectors; send dimensions %d or leave it out", emb.Model(), emb.Dimensions(), emb.Dimensions())}
	}
	return emb, nil
}

// serveEmbeddings is POST /v1/embeddings. Its answers, errors included,
// are OpenAI's shape, not Qdrant's envelope: its callers are OpenAI
// clients. It reaches no collection, so the caller's credentials are
// checked as a retrieve's would be: by tenancy, then by Authenticate.
func (s *Service) serveEmbeddings(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		s.failOpenAI(w, r, qdrantjson.Errorf(qdrantjson.ClassMethodNotAllowed, "%s %s accepts POST", r.Method, r.URL.Path))
		return
	}
	if s.cfg.Embedder == nil {
		s.failOpenAI(w, r, errNoEmbedder)
		return
	}
	if err := s.cfg.Tenancy.Authenticated(headerMetadata(r.Header)); err != nil {
		s.failOpenAI(w, r, err)
		return
	}
	ctx := s.cfg.AuthContext(r.Context(), r)
	if s.cfg.Authenticate != nil {
		if err := s.cfg.Authenticate(ctx); err != nil {
			s.failOpenAI(w, r, err)
			return
		}
	}
	body, err := qdrantjson.ReadBody(w, r, s.cfg.MaxBodyBytes)
	if err != nil {
		s.failOpenAI(w, r, err)
		return
	}
	req, err := DecodeEmbeddingsRequest(body)
	if err != nil {
		s.failOpenAI(w, r, err)
		return
	}
	if n := len(req.Input); n > s.cfg.MaxEmbeddingInputs {
		s.failOpenAI(w, r, inputError("input", "at most %d texts per call, got %d", s.cfg.MaxEmbeddingInputs, n))
		return
	}
	tokens := 0
	for i, t := range req.Input {
		switch {
		case strings.TrimSpace(t) == "":
			err = inputError(qdrantjson.Index("input", i), "a text must not be empty")
		case len(t) > s.cfg.MaxTextBytes:
			err = inputError(qdrantjson.Index("input", i), "at most %d bytes, got %d", s.cfg.MaxTextBytes, len(t))
		}
		if err != nil {
			s.failOpenAI(w, r, err)
			return
		}
		tokens += len(strings.Fields(t))
	}
	emb, err := s.embedderNamed(req.Model, req.Dimensions)
	if err != nil {
		s.failOpenAI(w, r, err)
		return
	}
	if len(req.Input)*emb.Dimensions() > maxEmbeddingFloats {
		s.failOpenAI(w, r, inputError("input", "%d texts of %d dimensions are more than one call answers (%d numbers); send fewer",
			len(req.Input), emb.Dimensions(), maxEmbeddingFloats))
		return
	}
	trace.SpanFromContext(ctx).SetAttributes(
		attribute.String("gen_ai.operation.name", "embeddings"),
		attribute.String("gen_ai.request.model", emb.Model()),
		attribute.Int("gen_ai.embeddings.dimension.count", emb.Dimensions()),
		attribute.Int("memrank.embed.inputs", len(req.Input)),
	)
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.cfg.RequestTimeout)
		defer cancel()
	}
	vecs, err := emb.Embed(ctx, req.Input)
	if err == nil && len(vecs) != len(req.Input) {
		err = fmt.Errorf("native: the embedder returned %d vectors for %d texts", len(vecs), len(req.Input))
	}
	if err != nil {
		if ctx.Err() == nil {
			err = &embedError{err}
		}
		s.failOpenAI(w, r, err)
		return
	}
	s.cfg.Telemetry.Logger.LogAttrs(r.Context(), slog.LevelDebug, "embeddings",
		slog.String("model", emb.Model()), slog.Int("inputs", len(vecs)), slog.Duration("took", time.Since(start)))
	qdrantjson.WriteJSON(w, http.StatusOK, appendEmbeddings(nil, vecs, emb.Model(), tokens, req.Base64))
}

// appendEmbeddings appends OpenAI's answer: each vector as float32 numbers
// in their shortest form, or in base64 of their little-endian bytes (what
// the openai packages ask for by default and decode into a Float32Array).
func appendEmbeddings(b []byte, vecs [][]float32, model string, tokens int, b64 bool) []byte {
	b = append(b, `{"object":"list","data":[`...)
	var raw []byte
	for i, v := range vecs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"object":"embedding","index":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `,"embedding":`...)
		if b64 {
			raw = raw[:0]
			for _, x := range v {
				raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(x))
			}
			b = append(b, '"')
			b = base64.StdEncoding.AppendEncode(b, raw)
			b = append(b, '"')
		} else {
			b = append(b, '[')
			for j, x := range v {
				if j > 0 {
					b = append(b, ',')
				}
				b = qdrantjson.AppendFloat32(b, x)
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	b = append(b, `],"model":`...)
	b = qdrantjson.AppendString(b, model)
	b = append(b, `,"usage":{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(tokens), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(tokens), 10)
	return append(b, "}}"...)
}

// failOpenAI answers err in OpenAI's error shape, {"error": {"message",
// "type", "param", "code"}}: the status and words are those every /v1
// route answers err with (clientError, qdrantjson.Classify), the param the
// field an input error names.
func (s *Service) failOpenAI(w http.ResponseWriter, r *http.Request, err error) {
	oe, ok := errors.AsType[*openAIError](err)
	withheld := false
	if !ok {
		a := qdrantjson.Classify(clientError(err))
		if a.RetryAfter != "" {
			w.Header().Set("Retry-After", a.RetryAfter)
		}
		oe = &openAIError{status: a.Status, message: a.Msg}
		if ie, ok := errors.AsType[*dedup.InputError](err); ok && ie.Field != "body" {
			oe.param = ie.Field
		}
		withheld = a.Withheld
	}
	typ := "invalid_request_error"
	switch {
	case oe.status == http.StatusUnauthorized:
		typ = "authentication_error"
	case oe.status == http.StatusForbidden:
		typ = "permission_error"
	case oe.status == http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case oe.status >= 500:
		typ = "server_error"
	}
	b := append([]byte(nil), `{"error":{"message":`...)
	b = qdrantjson.AppendString(b, oe.message)
	b = append(b, `,"type":`...)
	b = qdrantjson.AppendString(b, typ)
	for _, f := range []struct{ key, val string }{{"param", oe.param}, {"code", oe.code}} {
		b = append(b, `,"`+f.key+`":`...)
		if f.val == "" {
			b = append(b, "null"...)
		} else {
			b = qdrantjson.AppendString(b, f.val)
		}
	}
	b = append(b, "}}"...)
	qdrantjson.WriteJSON(w, oe.status, b)
	level := slog.LevelDebug
	if withheld || oe.status >= 500 {
		level = slog.LevelError
	}
	s.cfg.Telemetry.Logger.LogAttrs(r.Context(), level, "embeddings failed",
		slog.Int("status", oe.status), slog.String("error", err.Error()))
}

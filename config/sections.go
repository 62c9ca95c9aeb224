package config

import (
	"errors"
	"reflect"
	"strings"

	"github.com/memrank/memrank/config/check"
)

// Validator is a section of a configuration with rules of its own: a
// component's Config. The keys in its errors are relative to the section
// (the component does not know where it is mounted); ValidateSections puts
// the section's key in front.
type Validator interface {
	Validate() error
}

// ValidateSections validates every section inside v (a struct, or a pointer
// to one, whose fields carry koanf tags): each field whose value is a
// Validator is validated, with its key in front of the keys its errors name;
// any other struct field is walked for sections of its own. v's own Validate,
// if it has one, is not called (it is usually the caller): cross-section
// rules belong there, after ValidateSections.
func ValidateSections(v any) error {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return nil
		}
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return nil
	}
	return errors.Join(sections(rv, "")...)
}

func sections(v reflect.Value, prefix string) []error {
	var errs []error
	for i := range v.NumField() {
		sf := v.Type().Field(i)
		name := sf.Tag.Get("koanf")
		if name == "" || name == "-" || !sf.IsExported() {
			continue
		}
		key := joinKey(prefix, name)
		fv := v.Field(i)
		if val, ok := validator(fv); ok {
			errs = append(errs, Within(key, val.Validate()))
			continue
		}
		if fv.Kind() == reflect.Struct {
			errs = append(errs, sections(fv, key)...)
		}
	}
	return errs
}

// validator finds the Validator of a field, by value or by pointer.
func validator(v reflect.Value) (Validator, bool) {
	if val, ok := v.Interface().(Validator); ok {
		return val, true
	}
	if v.CanAddr() {
		if val, ok := v.Addr().Interface().(Validator); ok {
			return val, true
		}
	}
	return nil, false
}

// Within puts key in front of the keys of err's problems (*check.Problem or
// *Error), as a section's errors read from the root: "oversample" in
// section "rank" becomes "rank.oversample", and so do the keys a problem
// refers to with check.Ref. Any other error becomes a problem of key. Joined errors keep
// their order; nil stays nil.
func Within(key string, err error) error {
	if err == nil {
		return nil
	}
	mount := func(text string) string { return strings.ReplaceAll(text, check.RefOpen, check.RefOpen+key+".") }
	var out []error
	for _, e := range flatten(err) {
		switch ce := e.(type) {
		case *Error:
			c := *ce
			c.Key = joinKey(key, ce.Key)
			c.Problem = mount(c.Problem)
			out = append(out, &c)
		case *check.Problem:
			out = append(out, &Error{Key: joinKey(key, ce.Key), Problem: mount(ce.Text)})
		default:
			out = append(out, &Error{Key: key, Problem: e.Error(), err: e})
		}
	}
	return errors.Join(out...)
}

// flatten lists the errors errors.Join put together, depth first.
func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}

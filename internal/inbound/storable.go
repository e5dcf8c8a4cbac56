package inbound

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A webhook is stored as it came (inbound_events.payload is jsonb), but
// PostgreSQL refuses some valid JSON: a \u0000 escape, a lone surrogate
// (\ud800 with no low surrogate after it), bytes that are not UTF-8, and
// numbers numeric cannot hold (1e999999). One such character in one user's
// message would fail the whole webhook's insert: a 500 the provider repeats
// for days while every other event of that webhook waits. So the body is
// made storable before it is decoded: in the rare body that needs it, NUL
// characters, lone surrogates and bytes that are not UTF-8 become U+FFFD,
// and such numbers become strings of their digits. Besides storage, the
// decoded fields then hold no NUL, which PostgreSQL's text columns refuse
// as well (contact keys, message texts).

// maxNumberLength and maxExponent bound the numbers kept as numbers: longer
// ones, and ones with a larger exponent, could be refused by numeric or
// stored many times larger than they were sent (1e100000 comes back as
// 100,001 digits).
const (
	maxNumberLength = 64
	maxExponent     = 20
)

// storable returns body when PostgreSQL's jsonb accepts it as it is (the
// usual case: one pass over the bytes), and otherwise a rewritten copy it
// accepts, or an error when body is not JSON (a body that is not JSON may
// also come back as it is: its decoding fails then).
func storable(body []byte) ([]byte, error) {
	if jsonbAccepts(body) {
		return body, nil
	}
	if !json.Valid(body) {
		return nil, errors.New("not JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(clean(v)); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n")), nil
}

// clean makes a decoded value storable. The decoder has already turned
// bytes that are not UTF-8 and lone surrogates into U+FFFD; NUL remains.
func clean(v any) any {
	switch x := v.(type) {
	case string:
		return strings.ReplaceAll(x, "\x00", "\uFFFD")
	case json.Number:
		if !plainNumber(string(x)) {
			return string(x)
		}
		return x
	case []any:
		for i := range x {
			x[i] = clean(x[i])
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[clean(k).(string)] = clean(e)
		}
		return out
	}
	return v
}

// jsonbAccepts reports whether jsonb takes b as it is: UTF-8, no \u0000,
// surrogate escapes only in pairs, and plain numbers. It does not check
// that b is JSON (the decoder does).
func jsonbAccepts(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			// A string: look at its escapes.
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] != '\\' {
					continue
				}
				i++
				if i >= len(b) || b[i] != 'u' {
					continue
				}
				r, ok := hex4(b, i+1)
				switch {
				case !ok:
					return true // not JSON: the decoder says so
				case r == 0 || r >= 0xDC00 && r <= 0xDFFF:
					return false
				case r >= 0xD800 && r < 0xDC00:
					if i+6 >= len(b) || b[i+5] != '\\' || b[i+6] != 'u' {
						return false
					}
					if lo, ok := hex4(b, i+7); !ok || lo < 0xDC00 || lo > 0xDFFF {
						return false
					}
					i += 10
				default:
					i += 4
				}
			}
		case c == '-' || c >= '0' && c <= '9':
			j := i
			for j < len(b) && strings.IndexByte("+-0123456789.eE", b[j]) >= 0 {
				j++
			}
			if !plainNumber(string(b[i:j])) {
				return false
			}
			i = j - 1
		}
	}
	return true
}

// plainNumber reports whether a JSON number is short, with a small
// exponent if any.
func plainNumber(n string) bool {
	if len(n) > maxNumberLength {
		return false
	}
	e := strings.IndexAny(n, "eE")
	if e < 0 {
		return true
	}
	exp, err := strconv.Atoi(n[e+1:])
	return err == nil && exp >= -maxExponent && exp <= maxExponent
}

// hex4 reads the four hex digits of a \u escape at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[i:i+4]), 16, 32)
	return rune(n), err == nil
}

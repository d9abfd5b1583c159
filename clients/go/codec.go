package meshadopt

// The JSON helpers the generated types' methods share: a line is read strictly (no unknown
// field, no required one missing, at every depth), and written back field for field, tags
// and flattened enums included, so a decoded line encodes to the line it was.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// strict decodes data into v refusing unknown fields and trailing data. A type's own
// UnmarshalJSON does not inherit a decoder's DisallowUnknownFields, so every generated
// method reads through this.
func strict(data []byte, v interface{}) error {
	decoder := json.NewDecoder(bytes.NewReader(data))
	decoder.DisallowUnknownFields()
	if err := decoder.Decode(v); err != nil {
		return err
	}
	if _, err := decoder.Token(); err != io.EOF {
		return errors.New("data after the JSON value")
	}
	return nil
}

// isNull reports whether data is the JSON null.
func isNull(data []byte) bool {
	return string(bytes.TrimSpace(data)) == "null"
}

// object reads data as one JSON object, keeping its values as they were written.
func object(data []byte) (map[string]json.RawMessage, error) {
	if isNull(data) {
		return nil, errors.New("null where an object was expected")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, err
	}
	return fields, nil
}

// peekTag reads the string at key in the object data: the tag a union or an event is told by.
func peekTag(data []byte, key string) (string, error) {
	fields, err := object(data)
	if err != nil {
		return "", err
	}
	raw, ok := fields[key]
	if !ok {
		return "", fmt.Errorf("no %q field", key)
	}
	var tag string
	if err := json.Unmarshal(raw, &tag); err != nil {
		return "", fmt.Errorf("the %q field: %w", key, err)
	}
	return tag, nil
}

// onlyKey reads the one key of the object data: what a union keyed by its variant's name is
// told by.
func onlyKey(data []byte) (string, error) {
	fields, err := object(data)
	if err != nil {
		return "", err
	}
	if len(fields) != 1 {
		return "", fmt.Errorf("an object of %d keys where one was expected", len(fields))
	}
	for key := range fields {
		return key, nil
	}
	return "", nil
}

// inner is the members of the encoded object data, without its braces.
func inner(data []byte) []byte {
	data = bytes.TrimSpace(data)
	return bytes.TrimSpace(data[1 : len(data)-1])
}

// encodeObject writes fields (a struct with no methods of its own) as one object, with the tag
// key and value first when there is one, and the members of flattened (a union whose variant
// is written beside the fields) after them.
func encodeObject(tagKey, tagValue string, fields interface{}, flattened json.Marshaler) ([]byte, error) {
	var members [][]byte
	if tagKey != "" {
		key, _ := json.Marshal(tagKey)
		value, _ := json.Marshal(tagValue)
		members = append(members, append(append(key, ':'), value...))
	}
	for _, part := range []interface{}{fields, flattened} {
		if part == nil {
			continue
		}
		if m, ok := part.(json.Marshaler); ok && m == nil {
			continue
		}
		data, err := json.Marshal(part)
		if err != nil {
			return nil, err
		}
		if len(data) == 0 || data[0] != '{' {
			return nil, fmt.Errorf("a flattened value that is not an object: %s", data)
		}
		if body := inner(data); len(body) > 0 {
			members = append(members, body)
		}
	}
	return append(append([]byte{'{'}, bytes.Join(members, []byte{','})...), '}'), nil
}

// decodeObject reads data into fields (a struct with no methods of its own) strictly: the tag,
// when there is one, must be tagValue; every required key must be there; the keys not in own
// go to flattened, when there is one, and any other unknown key is an error.
func decodeObject(
	data []byte, tagKey, tagValue string, required []string, fields interface{}, own []string, flattened json.Unmarshaler,
) error {
	members, err := object(data)
	if err != nil {
		return err
	}
	if tagKey != "" {
		tag, err := peekTag(data, tagKey)
		if err != nil {
			return err
		}
		if tag != tagValue {
			return fmt.Errorf("the %q is %q where %q was expected", tagKey, tag, tagValue)
		}
	}
	for _, key := range required {
		if _, ok := members[key]; !ok {
			return fmt.Errorf("no %q field", key)
		}
	}
	if flattened != nil {
		rest := map[string]json.RawMessage{}
		for key, value := range members {
			if !contains(own, key) {
				rest[key] = value
				delete(members, key)
			}
		}
		data, err := json.Marshal(rest)
		if err != nil {
			return err
		}
		if err := flattened.UnmarshalJSON(data); err != nil {
			return err
		}
	}
	delete(members, tagKey)
	data, err = json.Marshal(members)
	if err != nil {
		return err
	}
	return strict(data, fields)
}

// encodeVariant writes the variant a union holds; a union holding none is an error, unless
// the union may be null.
func encodeVariant(union string, value interface{}, nullable bool) ([]byte, error) {
	if value == nil {
		if nullable {
			return []byte("null"), nil
		}
		return nil, fmt.Errorf("a %s holding no variant", union)
	}
	return json.Marshal(value)
}

func contains(list []string, key string) bool {
	for _, k := range list {
		if k == key {
			return true
		}
	}
	return false
}

package meshadopt

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Every line of the captured streams (testdata/*.jsonl: real runs, made again by `just
// go-streams`) decodes strictly into its event's type, and encodes back to the same JSON:
// no field dropped, none added, null and absent kept apart.
func TestCapturedStreamsDecodeAndEncodeBackTheSame(t *testing.T) {
	files, err := filepath.Glob("testdata/*.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"success", "refusal", "rule-broken", "lock-held", "interrupted"} {
		if !containsSuffix(files, want+".jsonl") {
			t.Errorf("testdata/%s.jsonl is missing: run `just go-streams`", want)
		}
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		// The default buffer: the command keeps every line within it.
		lines := bufio.NewScanner(bytes.NewReader(data))
		number := 0
		for lines.Scan() {
			number++
			line := lines.Bytes()
			event, err := Decode(line)
			if err != nil {
				t.Errorf("%s:%d: %v", file, number, err)
				continue
			}
			again, err := json.Marshal(event)
			if err != nil {
				t.Errorf("%s:%d: encoding: %v", file, number, err)
				continue
			}
			if !sameJSON(t, line, again) {
				t.Errorf("%s:%d: encoded back differently:\n read  %s\n wrote %s", file, number, line, again)
			}
		}
		if err := lines.Err(); err != nil {
			t.Errorf("%s: after line %d: %v", file, number, err)
		}
		if number == 0 {
			t.Errorf("%s is empty", file)
		}
	}
}

// A field this version does not know, a missing one, and an unknown kind are errors.
func TestDecodeIsStrict(t *testing.T) {
	for _, line := range []string{
		`{"event":"end","exit":0,"extra":1}`,
		`{"event":"end"}`,
		`{"event":"lock","outcome":"held","scope":null,"holder":null,"process_gone":false,"message":null,"remedy":{"action":"unlock","id":"x","force":false,"more":1}}`,
		`{"event":"lock","outcome":"stolen","scope":null,"holder":null,"process_gone":false,"message":null,"remedy":null}`,
		`{"event":"comet"}`,
	} {
		if event, err := Decode([]byte(line)); err == nil {
			t.Errorf("read %s as %#v", line, event)
		}
	}
	event, err := Decode([]byte(`{"event":"end","exit":0,"code":null,"remedy":null}`))
	if end, ok := event.(*EndEvent); err != nil || !ok || end.Exit != 0 {
		t.Errorf("%#v, %v", event, err)
	}
}

// sameJSON compares two JSON texts as values: numbers by value (1.0 is 1), key order aside.
func sameJSON(t *testing.T, a, b []byte) bool {
	return reflect.DeepEqual(normalised(t, a), normalised(t, b))
}

func normalised(t *testing.T, data []byte) interface{} {
	decoder := json.NewDecoder(bytes.NewReader(data))
	decoder.UseNumber()
	var value interface{}
	if err := decoder.Decode(&value); err != nil {
		t.Fatal(err)
	}
	return numbers(value)
}

// numbers turns each json.Number into an exact rational, so 1.0 and 1 compare equal and
// no large integer is rounded.
func numbers(value interface{}) interface{} {
	switch v := value.(type) {
	case json.Number:
		r, ok := new(big.Rat).SetString(string(v))
		if !ok {
			return string(v)
		}
		return r.RatString()
	case map[string]interface{}:
		for key, inner := range v {
			v[key] = numbers(inner)
		}
	case []interface{}:
		for i, inner := range v {
			v[i] = numbers(inner)
		}
	}
	return value
}

func containsSuffix(list []string, suffix string) bool {
	for _, item := range list {
		if strings.HasSuffix(item, suffix) {
			return true
		}
	}
	return false
}

// A remedy is read the same way from whatever holds one: the lock event's now, a refusal's or
// an error's as soon as the types that write them carry one.
func TestARemedyIsReadFromWhateverHoldsOne(t *testing.T) {
	line := `{"event":"lock","outcome":"held","scope":null,"holder":null,"process_gone":true,"message":null,"remedy":{"action":"unlock","id":"ab12","force":false}}`
	event, err := Decode([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	unlock, ok := remedyOf(event).Value.(*RemedyUnlock)
	if !ok || unlock.ID != "ab12" {
		t.Fatalf("%#v", remedyOf(event))
	}
	if (&RefusedError{}).Remedy() != nil || (&UnusableError{}).Remedy() != nil {
		t.Fatal("a remedy from nothing")
	}
}

// A line as long as the command writes (65,536 bytes with its newline) is read whole at
// bufio.Scanner's default; one longer than Runner.MaxLine is a StreamError, not a hang.
func TestALineAtTheBoundIsReadWholeAndALongerOneIsAnError(t *testing.T) {
	head, tail := `{"event":"say","module":"m","line":"`, `","at_ms":0}`
	body := strings.Repeat("x", DefaultMaxLine-1-len(head)-len(tail))
	line := head + body + tail + "\n"
	if len(line) != 65536 {
		t.Fatalf("the line is %d bytes", len(line))
	}
	result := &Result{}
	if err := (&Runner{}).read(strings.NewReader(line), result, nil); err != nil {
		t.Fatal(err)
	}
	if said, ok := result.Last.(*SayEvent); !ok || said.Line != body {
		t.Fatalf("%T", result.Last)
	}
	longer := head + body + "y" + tail + "\n"
	err := (&Runner{}).read(strings.NewReader(longer), &Result{}, nil)
	if stream, ok := err.(*StreamError); !ok || stream.Line != 1 {
		t.Fatalf("%v", err)
	}
}

// A mebibyte of a command's output on the stand-ins: the runner reads every `--json` line at
// bufio.Scanner's default buffer and decodes it strictly, the line that carried it says it
// was cut, and the record keeps it whole (a record is not read with a bounded scanner).
func TestAMegabyteOfOutputIsReadWithTheDefaultScanner(t *testing.T) {
	mesh := newStandIn(t)
	if err := os.WriteFile(filepath.Join(mesh.state, "flood-assign"), []byte("1"), 0o600); err != nil {
		t.Fatal(err)
	}
	options := mesh.options(t)
	options.Record = filepath.Join(t.TempDir(), "cut.jsonl")
	var cut []Event
	options.OnEvent = func(e Event) {
		if call, ok := e.(*CallEvent); ok && call.LineCut != nil {
			cut = append(cut, e)
		}
	}
	result, err := runner(t, t.TempDir()).Run(context.Background(), options)
	if err != nil || result.Exit != ExitOK {
		t.Fatalf("%v, exit %d", err, result.Exit)
	}
	if len(cut) != 1 || cut[0].(*CallEvent).LineCut.BytesLeftOut == 0 {
		t.Fatalf("%d lines cut", len(cut))
	}
	whole, err := os.ReadFile(options.Record)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(whole, bytes.Repeat([]byte("x"), 200<<10)) {
		t.Fatal("the record does not keep the output whole")
	}
}

package view_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/view"
)

// TestWriteContextJSONIsWriteJSON checks that the streamed context is
// WriteJSON's, byte for byte: messages with and without whitespace, HTML
// characters and escapes, an empty and a nil list, a projection, indented.
func TestWriteContextJSONIsWriteJSON(t *testing.T) {
	msgs := []json.RawMessage{
		json.RawMessage(`{"role":"user","content":"a <b> & \"c\" \u2028"}`),
		json.RawMessage("{ \"role\" : \"assistant\",\n\t\"content\": [ {\"type\":\"image\",\"data\":\"" + strings.Repeat("QUJD", 4000) + "\"} ] }"),
	}
	state := sessiontree.State{ThinkingLevel: "high", Model: &sessiontree.ModelRef{Provider: "p", ModelID: "m<1>"}, ActiveToolNames: []string{"read"}}
	proj := sessiontree.Projected{}
	cases := map[string]struct {
		c    view.ContextJSON
		opts view.JSONOptions
	}{
		"messages":   {c: view.NewContextJSON(sessiontree.Context{Messages: msgs, State: state}, nil)},
		"no state":   {c: view.NewContextJSON(sessiontree.Context{Messages: msgs}, nil)},
		"empty":      {c: view.NewContextJSON(sessiontree.Context{Messages: []json.RawMessage{}}, nil)},
		"nil":        {c: view.NewContextJSON(sessiontree.Context{}, nil)},
		"projection": {c: view.NewContextJSON(sessiontree.Context{Messages: msgs}, proj)},
		"indented":   {c: view.NewContextJSON(sessiontree.Context{Messages: msgs, State: state}, nil), opts: view.JSONOptions{Indent: true}},
	}
	for name, tc := range cases {
		var want, got bytes.Buffer
		if err := view.WriteJSON(&want, tc.c, tc.opts); err != nil {
			t.Fatal(err)
		}
		if err := view.WriteContextJSON(&got, tc.c, tc.opts); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s: WriteContextJSON wrote\n%.300s\nWriteJSON\n%.300s", name, got.Bytes(), want.Bytes())
		}
	}
}

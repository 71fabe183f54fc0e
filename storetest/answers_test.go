package storetest

import (
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
)

// TestAnswersDiff: alike answers give no diff; answers differing in one
// session's name give a diff naming it.
func TestAnswersDiff(t *testing.T) {
	answers := func(name string) Answers {
		return Answers{Sessions: map[string]SessionAnswers{"s": {Name: name, Labels: map[string]string{}}},
			ByModel: sessiontree.UsageReport{}}
	}
	if diff := AnswersDiff(answers("a"), answers("a")); diff != "" {
		t.Errorf("AnswersDiff of alike answers:\n%s\nwant none", diff)
	}
	if diff := AnswersDiff(answers("a"), answers("b")); !strings.Contains(diff, "Name") {
		t.Errorf("AnswersDiff of answers with another name = %q; want the name in it", diff)
	}
}

package store_test

import (
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
)

func TestSessionInfoListInfo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   store.SessionInfo
		want sessiontree.ListInfo
	}{
		{store.SessionInfo{Messages: 3, FirstUserMessage: "hi"}, sessiontree.ListInfo{MessageCount: 3, FirstMessage: "hi"}},
		{store.SessionInfo{Messages: 1}, sessiontree.ListInfo{MessageCount: 1, FirstMessage: sessiontree.NoMessages}},
	}
	for _, tt := range tests {
		if got := tt.in.ListInfo(); got != tt.want {
			t.Errorf("%+v.ListInfo() = %+v; want %+v", tt.in, got, tt.want)
		}
	}
}

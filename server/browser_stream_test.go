package server_test

import (
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserStreamStart opens a session while an entry is appended
// after the page has read the graph but before its event stream opens:
// the server holds the stream's request until the graph has been answered
// (or 3 s have passed), then appends, then serves it. The stream starts
// at the end of the log it is opened on, so a page that loaded the graph
// first never shows the entry (no later event comes); the page must read
// the graph once the stream is open.
func TestBrowserStreamStart(t *testing.T) {
	t.Parallel() // with the other browser test: each starts a Chromium of its own and waits on it
	graphDone := make(chan struct{})
	var graphOnce, appendOnce sync.Once
	var b atomic.Pointer[sessionBuilder] // set once the server runs
	lateID := make(chan string, 1)
	hold := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case strings.HasSuffix(r.URL.Path, "/events"):
				select {
				case <-graphDone:
				case <-time.After(3 * time.Second):
				}
				appendOnce.Do(func() { lateID <- b.Load().user("appended between the graph and the stream") })
			case strings.HasSuffix(r.URL.Path, "/graph"):
				defer graphOnce.Do(func() { close(graphDone) })
			}
			next.ServeHTTP(w, r)
		})
	}
	st, ts := newServer(t, hold)
	b.Store(newSession(t, st, "/home/ana/src/stream"))
	first := b.Load().user("the first message")
	p := newBrowser(t)
	p.dir = artifacts(t)
	id := b.Load().s.Storage().(interface{ ID() string }).ID()
	p.do("open the session", chromedp.Navigate(ts.URL+"/?token="+browserToken+"#/s/"+id), chromedp.WaitReady(chromedp.CSS(rowSel(first))))
	var late string
	select {
	case late = <-lateID:
	case <-time.After(stepTimeout):
		t.Fatal("the page opened no event stream")
	}
	p.wait("the entry appended before the stream opened", `!!document.querySelector(`+js(rowSel(late))+`)`)
}

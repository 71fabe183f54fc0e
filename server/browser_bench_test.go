package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/server"
	"github.com/sessiontree/sessiontree/store"
)

// bigSession stores a session of n messages: one long conversation with a
// side branch of 30 entries every 5,000, as an agent's months-long
// session looks. It returns the session's id.
func bigSession(tb testing.TB, st *store.Store, n int) string {
	tb.Helper()
	ctx := context.Background()
	es, err := st.Create(ctx, store.CreateOptions{Cwd: "/home/ana/src/big"})
	if err != nil {
		tb.Fatal(err)
	}
	defer es.Close()
	start := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	entries := make([]sessiontree.Entry, 0, n)
	parent := ""
	for i := range n {
		if i > 0 && i%5000 == 0 {
			parent = entries[i-30].ID // go back: the rest of the run is a side branch
		}
		msg := map[string]any{"role": "user", "content": fmt.Sprintf("step %d: continue the refactor of module %d", i, i%97)}
		if i%2 == 1 {
			msg = map[string]any{"role": "assistant", "provider": "anthropic", "model": "claude-sonnet-4-5",
				"content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("Done with step %d; the tests pass.", i)}},
				"usage":   usage(100, 20, 0, 0.0004)}
		}
		line := map[string]any{"type": "message", "id": fmt.Sprintf("%08x", i+1), "parentId": nil,
			"timestamp": sessiontree.FormatTime(start.Add(time.Duration(i) * 10 * time.Millisecond)), "message": msg}
		if parent != "" {
			line["parentId"] = parent
		}
		raw, err := json.Marshal(line)
		if err != nil {
			tb.Fatal(err)
		}
		e, err := sessiontree.DecodeEntry(raw)
		if err != nil {
			tb.Fatal(err)
		}
		entries = append(entries, e)
		parent = e.ID
	}
	if err := es.AppendBatch(ctx, entries); err != nil {
		tb.Fatal(err)
	}
	return es.ID()
}

// BenchmarkBrowserFirstScreen measures, in headless Chromium, the time
// from navigating to a 100,000-entry session to its tree's first screen
// drawn (the page's own performance mark): "cold-ms" with a new server,
// whose first answer builds the session's graph, and "warm-ms" on a
// reload, when the server has it.
func BenchmarkBrowserFirstScreen(b *testing.B) {
	st, _ := newServer(b)
	id := bigSession(b, st, 100_000)
	p := newBrowser(b)
	firstScreen := func(url string) float64 {
		p.do("blank", chromedp.Navigate("about:blank"))
		p.do("open the session", chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS("#graph g.row")))
		p.wait("its graph", `document.querySelectorAll("#graph g.row").length > 20`)
		return eval[float64](p, "timing", `performance.getEntriesByName("sessiontree-graph-drawn")[0].startTime`)
	}
	var cold, warm []float64
	for b.Loop() {
		h, err := server.New(st, server.Options{Token: browserToken})
		if err != nil {
			b.Fatal(err)
		}
		ts := httptest.NewServer(h)
		url := ts.URL + "/?token=" + browserToken + "#/s/" + id
		cold = append(cold, firstScreen(url))
		warm = append(warm, firstScreen(url))
		ts.CloseClientConnections()
		ts.Close()
	}
	b.ReportMetric(median(cold), "cold-ms")
	b.ReportMetric(median(warm), "warm-ms")
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	return s[len(s)/2]
}

// BenchmarkBigSession measures, over HTTP on a 100,000-entry session, the
// answers the page's first screen waits for: "graph-cold" the first
// window of the tree from a new server (which builds the session's
// graph), "graph-warm" the same window again, and "info" the info panel.
func BenchmarkBigSession(b *testing.B) {
	st, _ := newServer(b)
	id := bigSession(b, st, 100_000)
	get := func(b *testing.B, h http.Handler, path string) {
		req := httptest.NewRequest("GET", "http://127.0.0.1:7878"+path, nil)
		req.Header.Set("Authorization", "Bearer "+browserToken)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
	}
	newHandler := func(b *testing.B) http.Handler {
		h, err := server.New(st, server.Options{Token: browserToken})
		if err != nil {
			b.Fatal(err)
		}
		return h
	}
	graph := "/api/sessions/" + id + "/graph?limit=200"
	b.Run("graph-cold", func(b *testing.B) {
		for b.Loop() {
			get(b, newHandler(b), graph)
		}
	})
	b.Run("graph-warm", func(b *testing.B) {
		h := newHandler(b)
		get(b, h, graph)
		for b.Loop() {
			get(b, h, graph)
		}
	})
	b.Run("info", func(b *testing.B) {
		h := newHandler(b)
		for b.Loop() {
			get(b, h, "/api/sessions/"+id)
		}
	})
}

package server_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/pgtest"
	"github.com/sessiontree/sessiontree/server"
	"github.com/sessiontree/sessiontree/store"
)

// TestMain runs more tests at once than go test's default: the browser
// tests mostly wait for their Chromium, the others for their requests.
func TestMain(m *testing.M) { os.Exit(pgtest.RunWaiting(m)) }

// The browser test drives the page in a real, headless Chromium against
// the real server on a temporary store. Screenshots go to
// $SESSIONTREE_ARTIFACTS, else to the test's temporary directory; the test
// prints where. Under CI=true a missing browser fails the test; elsewhere
// the test is skipped, saying why.

var updateDocs = flag.Bool("update-docs", false, "rewrite docs/serve.png, the README's screenshot, from the browser test")

const browserToken = "browser-test-token"

// chromiumPath finds the browser: $SESSIONTREE_CHROMIUM, else Debian's
// chromium or another Chromium on the PATH.
func chromiumPath(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("SESSIONTREE_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	const why = "no Chromium on the PATH (apt-get install chromium, or set SESSIONTREE_CHROMIUM)"
	if os.Getenv("CI") == "true" {
		t.Fatal(why)
	}
	t.Skip(why)
	return ""
}

// artifacts returns the folder screenshots are saved in.
func artifacts(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("SESSIONTREE_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	}
	dir = filepath.Join(dir, t.Name())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", dir)
	return dir
}

// browserPage is one tab of a headless Chromium.
type browserPage struct {
	t   testing.TB
	ctx context.Context
	dir string // where screenshots go
}

// newBrowser starts Chromium with the flags it needs on a closed network
// (without them it waits on the network and hangs) and a fresh profile.
// Under -short it skips t: a Chromium takes seconds of CPU to start, and
// the quick loop leaves the browser tests to the full run.
func newBrowser(t testing.TB) *browserPage {
	t.Helper()
	if testing.Short() {
		t.Skip("starts Chromium: runs without -short")
	}
	exe := chromiumPath(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Headless,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.WindowSize(1500, 900),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-features", "Translate,MediaRouter,OptimizationHints"),
		// A name of another site that resolves to this machine, as DNS
		// rebinding makes one (checkOtherPort).
		chromedp.Flag("host-resolver-rules", "MAP "+reboundHost+" 127.0.0.1"),
	}
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to run as root with its sandbox
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// The first action starts the browser; it must not run under a
	// timeout, which would stop the browser with it.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1500, 900)); err != nil {
		t.Fatalf("start %s: %v", exe, err)
	}
	return &browserPage{t: t, ctx: ctx}
}

const stepTimeout = 30 * time.Second

// do runs steps, failing the test (with a screenshot) on an error.
func (p *browserPage) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		p.failShot(what)
		p.t.Fatalf("%s: %v", what, err)
	}
}

// click clicks the element sel selects. The page redraws a panel after a
// write, so an element found may be gone when clicked: a click that fails
// at once is tried again, twice.
func (p *browserPage) click(what, sel string) {
	p.t.Helper()
	var err error
	for range 3 {
		ctx, cancel := context.WithTimeout(p.ctx, stepTimeout)
		err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel)))
		expired := ctx.Err() != nil
		cancel()
		if err == nil || expired {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		p.failShot(what)
		p.t.Fatalf("%s: click %s: %v", what, sel, err)
	}
}

// eval returns the value of a JavaScript expression.
func eval[T any](p *browserPage, what, js string) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		p.failShot(what)
		p.t.Fatalf("%s: evaluate %s: %v", what, js, err)
	}
	return v
}

// wait waits until a JavaScript expression is true.
func (p *browserPage) wait(what, js string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, stepTimeout)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(stepTimeout-time.Second))); err != nil {
		p.failShot(what)
		p.t.Fatalf("%s: waiting for %s: %v", what, js, err)
	}
}

// setInput sets the value of a text field as typing would, input event
// included.
func (p *browserPage) setInput(what, sel, value string) {
	p.t.Helper()
	eval[bool](p, what, fmt.Sprintf(`(() => { const el = document.querySelector(%s); el.value = %s; el.dispatchEvent(new Event("input", {bubbles: true})); return true })()`, js(sel), js(value)))
}

// shot saves a screenshot of the page as name.png.
func (p *browserPage) shot(name string) string {
	p.t.Helper()
	if testing.Short() && os.Getenv("SESSIONTREE_ARTIFACTS") == "" && !*updateDocs {
		return "" // -short: no one looks at them
	}
	ctx, cancel := context.WithTimeout(p.ctx, stepTimeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		p.t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(p.dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		p.t.Fatal(err)
	}
	return path
}

// failShot saves what the page showed when a step failed, if it can.
func (p *browserPage) failShot(what string) {
	if p.dir == "" {
		return
	}
	ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
	defer cancel()
	if png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot()); err == nil {
		name := "failed-" + strings.Map(func(r rune) rune {
			if r == ' ' || r == '/' {
				return '-'
			}
			return r
		}, what) + ".png"
		_ = os.WriteFile(filepath.Join(p.dir, name), png, 0o644)
	}
}

// newServer serves a fresh store with the real server, wrapped by wrap
// when given.
func newServer(t testing.TB, wrap ...func(http.Handler) http.Handler) (*store.Store, *httptest.Server) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "sessions.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Check(context.Background(), ""); err != nil {
			t.Errorf("store check after the browser test: %v", err)
		}
		_ = st.Close()
	})
	h, err := server.New(st, server.Options{Token: browserToken, PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var handler http.Handler = h
	for _, w := range wrap {
		handler = w(handler)
	}
	ts := httptest.NewServer(handler)
	// The page keeps an event stream open: close it, or Close waits.
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
	return st, ts
}

// js quotes s as a JavaScript string.
func js(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == '<' || r == '>':
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// rowSel is the CSS selector of the graph row of an entry.
func rowSel(id string) string {
	return fmt.Sprintf(`#graph g.row:not(.fold)[data-id="%s"]`, id)
}

// rowText is the expression for the text of an entry's graph row.
func rowText(id string) string {
	return fmt.Sprintf(`(document.querySelector(%s)?.textContent ?? "")`, js(rowSel(id)))
}

func TestBrowser(t *testing.T) {
	t.Parallel() // with the other browser test: each starts a Chromium of its own and waits on it
	st, ts := newServer(t)
	p := newBrowser(t)
	p.dir = artifacts(t)
	real, ids := realSession(t, st)

	// The first load: the token moves from the address into the tab.
	p.do("open the page", chromedp.Navigate(ts.URL+"/?token="+browserToken+"#/s/"+real), chromedp.WaitReady(chromedp.CSS("#graph g.row")))
	if href := eval[string](p, "address", `location.href`); strings.Contains(href, browserToken) {
		t.Errorf("the address still holds the token: %s", href)
	}
	if got := eval[string](p, "token", `sessionStorage.getItem("sessiontree.token")`); got != browserToken {
		t.Errorf("sessionStorage token = %q; want %q", got, browserToken)
	}
	// The README's picture: the session with an entry open.
	p.click("select the cause", rowSel(ids["cause"]))
	p.wait("its context", `document.querySelectorAll("#entry .context-messages .msg").length > 0`)
	p.wait("the info", `document.querySelectorAll("#info table").length > 0`)
	readme := p.shot("0-session")
	ms := eval[float64](p, "timing", `performance.getEntriesByName("sessiontree-graph-drawn")[0]?.startTime ?? -1`)
	t.Logf("first screen of a %d-entry session's tree drawn %.0f ms after navigation", countEntries(t, st, real), ms)
	if *updateDocs {
		if err := copyFile(readme, filepath.Join("..", "docs", "serve.png")); err != nil {
			t.Fatal(err)
		}
	}

	checkOtherPort(t, p, ts)

	// Reloaded, the page reads and writes with the token the tab kept.
	hostile, hostileEntry := hostileSession(t, st)
	p.do("reload the page", chromedp.Navigate(ts.URL+"/"), chromedp.WaitReady(chromedp.CSS("#list li")))
	p.wait("the session list", `document.querySelectorAll("#list .session-item").length === 2`)
	titles := eval[[]string](p, "titles", `[...document.querySelectorAll("#list .session-item .title")].map(e => e.textContent)`)
	if want := []string{hostileName, "flaky TestLockRelease"}; strings.Join(titles, "|") != strings.Join(want, "|") {
		t.Errorf("list titles = %q; want %q", titles, want)
	}
	p.shot("1-list")

	// Search as you type, across sessions, hits on and off the branch.
	p.do("type a search", chromedp.SendKeys(chromedp.CSS("#search"), "sleep"))
	p.wait("search hits", `document.querySelectorAll("#list .hit-item").length > 0`)
	badges := eval[[]string](p, "badges", `[...document.querySelectorAll("#list .hit-item .badge")].map(e => e.textContent)`)
	if !slices.Contains(badges, "off branch") || !slices.Contains(badges, "on branch") {
		t.Errorf("hit badges = %q; want hits on and off the active branch", badges)
	}
	if n := eval[int](p, "marks", `document.querySelectorAll("#list .hit-item mark").length`); n == 0 {
		t.Errorf("no matched word is marked in the snippets")
	}
	p.shot("2-search")
	// A hit opens its session at its entry.
	p.click("open a hit", fmt.Sprintf(`#list .hit-item[data-entry="%s"]`, ids["sleep"]))
	p.wait("the hit's entry selected", fmt.Sprintf(`document.querySelector(%s)?.classList.contains("selected")`, js(rowSel(ids["sleep"]))))
	p.wait("the hit's entry shown", `document.querySelector("#entry .entry")?.textContent.includes("200 of 200 runs pass")`)

	// The branched session's tree: folds, labels, the active path, the
	// compaction and the branch summary.
	p.setInput("clear the search", "#search", "")
	p.wait("the list again", `document.querySelectorAll("#list .session-item").length === 2`)
	p.click("open the session", fmt.Sprintf(`#list .session-item[data-id="%s"]`, real))
	p.wait("the graph", `document.querySelectorAll("#graph g.row").length > 5`)
	checkGraph(t, p, ids)
	p.shot("3-session")

	// Expand a fold: the folded user message appears.
	if got := eval[bool](p, "folded", fmt.Sprintf(`!!document.querySelector(%s)`, js(rowSel(ids["fix"])))); got {
		t.Fatalf("entry %s is drawn before its fold is expanded", ids["fix"])
	}
	foldsBefore := eval[int](p, "folds", `document.querySelectorAll("#graph g.row.fold").length`)
	p.click("expand the fold", fmt.Sprintf(`#graph g.row.fold[data-id="%s"]`, ids["fix"]))
	p.wait("the fold's entries", fmt.Sprintf(`!!document.querySelector(%s)`, js(rowSel(ids["fix"]))))
	if n := eval[int](p, "folds", `document.querySelectorAll("#graph g.row.fold").length`); n != foldsBefore-1 {
		t.Errorf("after expanding one fold: %d folds; want %d", n, foldsBefore-1)
	}

	// Click an entry: its text, and the context from there.
	p.click("click an entry", rowSel(ids["fix"]))
	p.wait("the entry", `document.querySelector("#entry .entry")?.textContent.includes("Make Release synchronous")`)
	if src := eval[string](p, "image", `document.querySelector("#entry .entry img.block-image")?.src ?? ""`); src != "data:image/png;base64,"+tinyPNG {
		t.Errorf("the entry's image src = %.60q; want the PNG's data URL", src)
	}
	p.wait("the context", `document.querySelectorAll("#entry .context-messages .msg").length > 0`)
	ctxText := eval[string](p, "context", `document.querySelector("#entry .context").textContent`)
	for _, want := range []string{"branchSummary", "Tried a 10 ms sleep", "unlocks in a goroutine", "No sleeps. Make Release synchronous"} {
		if !strings.Contains(ctxText, want) {
			t.Errorf("the context from %s lacks %q:\n%s", ids["fix"], want, ctxText)
		}
	}
	if !strings.Contains(ctxText, "The test checks too early") {
		t.Errorf("the context from %s lacks the assistant's finding", ids["fix"])
	}
	if strings.Contains(ctxText, "With the sleep 200 of 200") {
		t.Errorf("the context from %s holds the abandoned branch", ids["fix"])
	}
	p.shot("4-entry")

	// Label an entry and see it drawn.
	p.setInput("type a label", "#label-input", "the fix <b>")
	p.click("label the entry", "#label-button")
	p.wait("the label drawn", rowText(ids["fix"])+`.includes("[the fix <b>]")`)
	p.wait("the entry redrawn", `document.querySelector("#entry .label-tag")?.textContent === "the fix <b>"`)

	// Omit an entry from the context: the tree marks it.
	p.click("omit the entry", "#omit-button")
	p.wait("the omitted mark", rowText(ids["fix"])+`.includes("(omitted)")`)

	// Live: an entry another writer appends shows up.
	es, err := st.OpenSession(context.Background(), real)
	if err != nil {
		t.Fatal(err)
	}
	b := &sessionBuilder{t: t, ctx: context.Background(), s: sessiontree.NewSession(es, sessiontree.SessionOptions{})}
	live := b.user("One more thing: add a regression test.")
	es.Close()
	p.wait("the appended entry", fmt.Sprintf(`!!document.querySelector(%s)`, js(rowSel(live))))

	// Move the leaf back with a summary: the leaf mark moves.
	p.click("click the cause", rowSel(ids["cause"]))
	p.wait("the cause", `document.querySelector("#entry .entry")?.textContent.includes("Found it")`)
	p.setInput("type a summary", "#summary-input", "Reviewed; going back.")
	p.click("move the leaf", "#leaf-button")
	p.wait("a new branch summary is the leaf", `[...document.querySelectorAll("#graph g.row.leaf")].some(g => g.textContent.includes("Reviewed; going back."))`)
	if eval[bool](p, "old leaf", fmt.Sprintf(`document.querySelector(%s).classList.contains("active")`, js(rowSel(live)))) {
		t.Errorf("the entry left behind is still on the active path")
	}
	p.shot("5-actions")

	// Fork up to an entry: the new session opens.
	p.click("fork", "#fork-button")
	p.wait("the fork opened", fmt.Sprintf(`location.hash.startsWith("#/s/") && !location.hash.includes(%s) && document.querySelectorAll("#graph g.row").length > 0`, js(real)))
	if n := eval[int](p, "sessions", `document.querySelectorAll("#list .session-item").length`); n != 3 {
		t.Errorf("after the fork the list shows %d sessions; want 3", n)
	}

	// The hostile session: everything shown as text, nothing run.
	p.click("open the hostile session", fmt.Sprintf(`#list .session-item[data-id="%s"]`, hostile))
	p.wait("its graph", fmt.Sprintf(`!!document.querySelector(%s)`, js(rowSel(hostileEntry))))
	p.click("click its message", rowSel(hostileEntry))
	p.wait("its entry", `document.querySelectorAll("#entry .context-messages .msg").length >= 1`)
	p.wait("its name", `document.querySelector("#session-head h2")?.textContent === `+js(hostileName))
	checkEscaped(t, p, hostileEntry)
	p.shot("6-hostile")

	// The open session deleted by another process: its stream's error
	// event says so, and the page is no longer live.
	if _, err := st.Delete(context.Background(), hostile); err != nil {
		t.Fatal(err)
	}
	p.wait("the stream's error shown", `document.querySelector("#status").textContent.startsWith("live updates: ") && !document.querySelector("#live").classList.contains("on")`)
	if got := eval[string](p, "status", `document.querySelector("#status").textContent`); !strings.Contains(got, hostile) {
		t.Errorf("status after the open session was deleted = %q; want it to name the session", got)
	}

	// A long session: the page holds a window of rows, not all of them,
	// and scrolling brings the others.
	long := bigSession(t, st, 3000)
	p.do("open a long session", chromedp.Navigate(ts.URL+"/#/s/"+long), chromedp.WaitReady(chromedp.CSS("#graph g.row.fold")))
	p.wait("its head", `document.querySelector("#session-head .meta")?.textContent.includes("3,000 entries")`)
	p.click("expand its run", "#graph g.row.fold")
	p.wait("the run expanded", `document.querySelector("#graph .graph-space").offsetHeight > 2900 * 24`)
	if n := eval[int](p, "rows", `document.querySelectorAll("#graph g.row").length`); n > 300 {
		t.Errorf("the page draws %d rows of a 3,000-row graph; want a window", n)
	}
	p.do("scroll to the end", chromedp.Evaluate[chromedp.Void](`(() => { const g = document.querySelector("#graph"); g.scrollTop = g.scrollHeight })()`))
	last := fmt.Sprintf("%08x", 3000)
	p.wait("the last rows", fmt.Sprintf(`!!document.querySelector(%s)`, js(rowSel(last))))
	p.shot("8-long-end")

	// Many sessions: the list shows a page, and the next on asking.
	for i := range 120 {
		es, err := st.Create(context.Background(), store.CreateOptions{Cwd: fmt.Sprintf("/tmp/many/%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		es.Close()
	}
	p.do("reload the page", chromedp.Navigate(ts.URL+"/"), chromedp.WaitReady(chromedp.CSS("#list .more-sessions")))
	if n := eval[int](p, "sessions", `document.querySelectorAll("#list .session-item").length`); n != 100 {
		t.Errorf("the list's first page shows %d sessions; want 100", n)
	}
	p.click("show more sessions", "#list .more-sessions")
	p.wait("the next page", `document.querySelectorAll("#list .session-item").length === 123 && !document.querySelector("#list .more-sessions")`)

}

// reboundHost is a name the browser resolves to 127.0.0.1.
const reboundHost = "rebound.test"

// checkOtherPort visits, in the tab that opened the page, a page that
// another program serves on another port of the same host, and checks
// that it can read no session: the browser sends it the host's cookies
// (cookies ignore ports), and none of them reads; and the browser's
// fetches of the API from there, with its cookies, are refused. Then it
// opens the server under another site's name that resolves to it (DNS
// rebinding), which gets nothing, not even the page.
func checkOtherPort(t *testing.T, p *browserPage, ts *httptest.Server) {
	t.Helper()
	rebound := strings.Replace(ts.URL, "127.0.0.1", reboundHost, 1) + "/"
	p.do("open the server by a rebound name", chromedp.Navigate(rebound))
	if body := eval[string](p, "rebound page", `document.body.textContent`); !strings.Contains(body, "is not served") {
		t.Errorf("the server under the name %s answered %.100q; want a 403 naming the host", reboundHost, body)
	}
	var mu sync.Mutex
	var got []*http.Cookie
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Cookies()...)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<!doctype html><title>another program</title>")
	}))
	defer other.Close()
	p.do("visit another port", chromedp.Navigate(other.URL+"/"))
	for _, mode := range []string{"cors", "no-cors"} {
		ctx, cancel := context.WithTimeout(p.ctx, stepTimeout)
		answer, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(
			`fetch(%s, {mode: %s, credentials: "include"}).then(r => r.text(), e => "refused: " + e.message)`,
			js(ts.URL+"/api/sessions"), js(mode)), chromedp.EvalAwaitPromise))
		cancel()
		if err != nil {
			t.Fatalf("fetch from another port: %v", err)
		}
		if strings.Contains(answer, `"id"`) {
			t.Errorf("a %s fetch from another port read the sessions: %.100s", mode, answer)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, c := range got {
		t.Errorf("another port of the host got the cookie %s=%s", c.Name, c.Value)
		req, _ := http.NewRequest("GET", ts.URL+"/api/sessions", nil)
		req.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET /api/sessions with the cookie %s another port got = %d; want 401", c.Name, resp.StatusCode)
		}
	}
}

// checkGraph checks what the tree of realSession shows.
func checkGraph(t *testing.T, p *browserPage, ids map[string]string) {
	t.Helper()
	for _, c := range []struct {
		id, want string
		active   bool
	}{
		{ids["ask"], "[the bug]", true},
		{ids["cause"], "[root cause]", true},
		{ids["sleep"], "[sleep workaround]", false},
	} {
		text := eval[string](p, "row", rowText(c.id))
		if !strings.Contains(text, c.want) {
			t.Errorf("row %s = %q; want it to show %q", c.id, text, c.want)
		}
		active := eval[bool](p, "row", fmt.Sprintf(`document.querySelector(%s).classList.contains("active")`, js(rowSel(c.id))))
		if active != c.active {
			t.Errorf("row %s active = %v; want %v", c.id, active, c.active)
		}
	}
	for _, sel := range []string{"g.row.t-compaction", "g.row.t-branch_summary", "g.row.fold", "g.row.leaf", "path.edge.active"} {
		if n := eval[int](p, sel, `document.querySelectorAll("#graph "+`+js(sel)+`).length`); n == 0 {
			t.Errorf("the graph has no %s", sel)
		}
	}
	lanes := eval[[]string](p, "lanes", `[...new Set([...document.querySelectorAll("#graph g.row circle")].map(c => c.getAttribute("cx")))]`)
	if len(lanes) < 2 {
		t.Errorf("the graph draws its branches in %d lane(s); want 2", len(lanes))
	}
}

// checkEscaped checks that the hostile session's text is shown exactly and
// that none of it ran or became markup.
func checkEscaped(t *testing.T, p *browserPage, entry string) {
	t.Helper()
	if got := eval[string](p, "pwned", `String(window.__pwned)`); got != "undefined" {
		t.Errorf("session text ran as script: window.__pwned = %q", got)
	}
	if n := eval[int](p, "scripts", `document.querySelectorAll("script:not([src])").length + document.querySelectorAll("[onerror], [onclick], a[href]").length`); n != 0 {
		t.Errorf("session text became %d script or handler elements", n)
	}
	if n := eval[int](p, "images", `document.querySelectorAll("#entry img, #graph img, #list img").length`); n != 0 {
		t.Errorf("session text became %d img elements", n)
	}
	for _, c := range []struct{ what, js, want string }{
		{"the name in the list", `[...document.querySelectorAll("#list .title")].map(e => e.textContent).join("|")`, hostileName},
		{"the name in the header", `document.querySelector("#session-head h2").textContent`, hostileName},
		{"the label in the tree", rowText(entry), "[" + hostileLabel + "]"},
		{"the message in the entry", `document.querySelector("#entry .entry").textContent`, hostileMessage},
		{"the reply in the tree", `document.querySelector("#graph").textContent`, hostileReply},
		{"the label in the entry", `document.querySelector("#entry .label-tag").textContent`, hostileLabel},
		{"the label in the input", `document.querySelector("#label-input").value`, hostileLabel},
		{"the images not shown", `document.querySelector("#entry .entry").textContent`, "[image of type image/svg+xml not shown]"},
	} {
		if got := eval[string](p, c.what, c.js); !strings.Contains(got, c.want) {
			t.Errorf("%s = %q; want it to show %q as text", c.what, got, c.want)
		}
	}
}

func countEntries(t testing.TB, st *store.Store, id string) int64 {
	t.Helper()
	info, err := st.Info(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return info.Entries
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		return errors.Join(fmt.Errorf("write %s", to), err)
	}
	return nil
}

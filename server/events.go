package server

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/view"
)

// heartbeat is how often an idle event stream sends a comment line, so
// that a client that has gone is noticed and proxies keep the stream.
const heartbeat = 15 * time.Second

// eventsPage bounds the entries one poll sends.
const eventsPage = 1000

// events streams the session's new entries as server-sent events, one
// event per entry: "id: SEQ", "event: entry", "data: <the entry>". It
// starts after the Last-Event-ID a reconnecting browser sends, or after
// entry ?after=SEQ, or else at the end of the log (only what is appended
// from now on). Entries other processes write are seen too: the
// log after the last sent entry is read every Options.PollInterval. The
// stream ends when the client goes, the server shuts down, or the session
// is deleted (an "error" event says so).
func (srv *Server) events(w http.ResponseWriter, r *http.Request) error {
	release, err := srv.takeStream(w)
	if err != nil {
		return err
	}
	defer release()
	st, err := srv.open(r)
	if err != nil {
		return err
	}
	defer st.Close()
	after, err := srv.eventsStart(r, st)
	if err != nil {
		return err
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		// A HEAD answer has no body: nobody would read the stream, and
		// the connection's next request would wait behind it.
		return nil
	}
	bw := bufio.NewWriter(w)
	// A first comment lets the client know the stream is open.
	fmt.Fprint(bw, ": sessiontree events\n\n")
	if bw.Flush() != nil || rc.Flush() != nil {
		return nil
	}
	poll := time.NewTicker(srv.opts.PollInterval)
	defer poll.Stop()
	lastSent := time.Now()
	for {
		select {
		case <-r.Context().Done():
			return nil
		case <-poll.C:
		}
		log, err := srv.newEntries(r, st, after)
		if err != nil {
			if r.Context().Err() == nil {
				_, code := StatusOf(err)
				writeEvent(bw, "", "error", errorJSON(code, err.Error()))
				_ = bw.Flush()
				_ = rc.Flush()
			}
			return nil
		}
		for _, e := range log {
			writeEvent(bw, strconv.FormatInt(e.Seq, 10), "entry", view.UTF8JSON(e.Raw))
			after = e.Seq
		}
		if len(log) == 0 && time.Since(lastSent) < heartbeat {
			continue
		}
		if len(log) == 0 {
			fmt.Fprint(bw, ": ping\n\n")
		}
		if bw.Flush() != nil || rc.Flush() != nil {
			return nil // the client has gone
		}
		lastSent = time.Now()
	}
}

// takeStream takes one of the Options.MaxStreams slots of the event
// streams served at once, or refuses (ErrBusy, a 503 telling the client
// to try again in a few seconds) when none is free. Call release when
// the stream ends.
func (srv *Server) takeStream(w http.ResponseWriter) (release func(), err error) {
	select {
	case srv.streams <- struct{}{}:
		return func() { <-srv.streams }, nil
	default:
		w.Header().Set("Retry-After", "5")
		return nil, fmt.Errorf("%d event streams are open, as many as this server serves at once (serve --max-streams): %w", cap(srv.streams), ErrBusy)
	}
}

// writeEvent writes one event: its id (none when ""), its type and data,
// a line of JSON. A carriage return or line feed in data (white space
// between the tokens of a line stored byte for byte) would end the data
// line, so each piece between them goes on a data line of its own; a
// browser joins them with a line feed, which is white space to JSON too.
func writeEvent(w *bufio.Writer, id, event string, data []byte) {
	if id != "" {
		fmt.Fprintf(w, "id: %s\n", id)
	}
	fmt.Fprintf(w, "event: %s\n", event)
	for _, line := range bytes.FieldsFunc(data, func(r rune) bool { return r == '\r' || r == '\n' }) {
		fmt.Fprintf(w, "data: %s\n", line)
	}
	w.WriteByte('\n')
}

// newEntries returns the entries appended after the afterth, reading the
// session's row (one lookup by key, which also notices a deleted session)
// and the log only when the row counts more. A log that has none of them
// is another session's row: st was deleted and a session made again
// under its id, which st cannot read.
func (srv *Server) newEntries(r *http.Request, st sessiontree.DatabaseSession, after int64) ([]sessiontree.Entry, error) {
	in, err := srv.store.Info(r.Context(), st.ID())
	if err != nil || in.Entries <= after {
		return nil, err
	}
	log, err := st.Log(r.Context(), after, eventsPage)
	if err == nil && len(log) == 0 {
		return nil, fmt.Errorf("session %s was deleted and made again while the stream was open: %w", st.ID(), sessiontree.ErrNotFound)
	}
	return log, err
}

// eventsStart returns the sequence number an event stream starts after:
// the one asked for (eventsCursor), which the log must reach (past its
// end no entry would ever come: a 400 says so), else the log's end.
func (srv *Server) eventsStart(r *http.Request, st sessiontree.DatabaseSession) (int64, error) {
	in, err := srv.store.Info(r.Context(), st.ID())
	if err != nil {
		return 0, err
	}
	n, given, err := eventsCursor(r)
	switch {
	case err != nil:
		return 0, err
	case given == "":
		return in.Entries, nil
	case n > in.Entries:
		return 0, fmt.Errorf("%s %d: the session's log has %d entries: %w", given, n, in.Entries, ErrBadRequest)
	}
	return n, nil
}

// eventsCursor reads where a stream is asked to start, and what asked
// it ("" for neither): a reconnecting browser repeats the URL it first
// opened, so its Last-Event-ID, which is later, wins over ?after.
func eventsCursor(r *http.Request) (int64, string, error) {
	if s := r.Header.Get("Last-Event-ID"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return 0, "", fmt.Errorf("Last-Event-ID %q: want an entry's sequence number: %w", s, ErrBadRequest)
		}
		return n, "Last-Event-ID", nil
	}
	if _, ok := param(r, "after"); !ok {
		return 0, "", nil
	}
	n, err := intParam(r, "after", 0)
	return n, "after", err
}

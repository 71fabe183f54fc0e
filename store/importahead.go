package store

// The first pass of a large new file's import run ahead. A file larger
// than a chunk is read twice (twice): a first pass that checks all of it
// and writes nothing, then a second that commits it chunk by chunk. The
// first pass needs nothing of the writer, so the reader goroutine
// (readAhead) runs it while the writer imports the files before it, on
// the other core, instead of the writer waiting for it (the images
// session of the bench's folder, 22 of its 28 MB, was checked on one core
// while the writer sat idle). A file it does not refuse then has its
// second pass started too, when the writer is on small files, so that
// its first chunks (two at most, chunksHeld) are read while they are
// written. Only the store's answer about the file's header (is its
// session taken? was the file recorded meanwhile?) waits for the
// writer's turn: it depends on what the files before it wrote.

import (
	"cmp"
	"errors"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/lines"
	"github.com/sessiontree/sessiontree/jsonl"
)

// aheadLineBytes bounds the lines of a first pass run ahead: the writer
// may hold a line of the file before (the import's memory is bounded by
// its longest line plus a constant, not two of them), so a file with a
// longer line gives up its first pass ahead, and the writer runs it in
// its turn, as for any file.
const aheadLineBytes = lines.HugeLine

// checkedAhead is what a file's first pass run ahead found.
type checkedAhead struct {
	end    int64 // how far the second pass is to read
	err    error // why the file is refused, nil when it is not
	header bool  // the pass took the session from the file's header
	// gather is the second pass, when it was started ahead too.
	gather *gathering
}

// stop stops the second pass started ahead, if any (c may be nil).
func (c *checkedAhead) stop() {
	if c != nil && c.gather != nil {
		c.gather.end()
		c.gather = nil
	}
}

// checkAhead runs the first pass of the import of the new file fim
// opened, and, when gather says so and the file is not refused, starts
// the second, for the writer to commit (twiceChecked). It tells whether
// the writer may use them: not when the pass met a line longer than
// aheadLineBytes (and than the import's bound) or ctx is done, nor for
// an error other than the file's refusal, which the writer's own pass
// then says.
func (fim *fileImport) checkAhead(gather bool) bool {
	ok := fim.runAhead()
	if ok && gather && fim.ahead.err == nil {
		fim.ahead.gather = fim.gatherTo(fim.ahead.end)
	}
	if hook := fim.tune.afterAhead; hook != nil {
		hook(fim.path, ok, ok && fim.ahead.gather != nil)
	}
	return ok
}

// runAhead is checkAhead without its hook.
func (fim *fileImport) runAhead() bool {
	limit := cmp.Or(fim.maxLine, jsonl.DefaultMaxLineBytes)
	reduced, maxLine := limit > fim.tune.aheadLine, fim.maxLine
	fim.maxLine = min(limit, fim.tune.aheadLine)
	fim.ahead = &checkedAhead{}
	fim.restart()
	end, err := fim.check()
	fim.ahead.end, fim.ahead.err, fim.maxLine = end, err, maxLine
	var oe *outcomeError
	var long *jsonl.LineTooLongError
	ok := fim.ctx.Err() == nil && (err == nil || errors.As(err, &oe) && !(reduced && errors.As(err, &long)))
	if !ok {
		fim.ahead = nil
	}
	return ok
}

// checkHeader takes the file's header in the first pass. Ahead of the
// writer, only what the file says is taken: the store is asked in the
// writer's turn (twiceChecked).
func (fim *fileImport) checkHeader(h jsonl.Header) error {
	if fim.ahead == nil {
		return fim.s.d.View(fim.ctx, func(tx sessiontree.DatabaseTx) error { return fim.takeHeader(tx, h) })
	}
	if err := fim.header(h); err != nil {
		return err
	}
	fim.ahead.header = true
	return nil
}

// twiceChecked is twice for a file whose first pass ran ahead: it asks
// the store, now, what the pass would have asked at the header (in the
// order takeHeader asks it), then ends as the pass did, with its refusal
// or with the second pass (started ahead or now). A file the store
// refuses ends as its first pass would have at the header, with nothing
// of the rest noted.
func (fim *fileImport) twiceChecked() error {
	pre := fim.ahead
	fim.ahead = nil
	if pre.header {
		err := fim.s.d.View(fim.ctx, func(tx sessiontree.DatabaseTx) error {
			if _, _, err := fim.recheck(tx); err != nil {
				return err
			}
			return fim.claim(tx)
		})
		if err != nil {
			pre.stop()
			fim.restart()
			return err
		}
	}
	if pre.err != nil {
		return pre.err
	}
	g := pre.gather
	if g == nil {
		g = fim.gatherTo(pre.end)
	}
	return fim.commitGathered(g)
}

// adopt makes fim, opened and checked ahead by the reader goroutine, the
// import of the writer's attempt: its gate and progress, and res, which
// takes what the first pass noted.
func (fim *fileImport) adopt(g gate, prog *progressReport, res *FileResult) {
	*res = *fim.res
	fim.gate, fim.prog, fim.res = g, prog, res
}

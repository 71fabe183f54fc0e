package main

// The folder workloads: issue 17's import of a user's whole pi folder,
// years of history, as a first run of `sessiontree import` meets it.
// The folder is the store-import slice of the corpus (hundreds of small
// sessions, a few KB each) together with a few long sessions, one with
// inline images: sizes from a few KB to tens of MB (-full: to 100 MB).

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/store"
)

// folderSession is one long session of the folder.
type folderSession struct {
	Shape Shape
	Size  int
}

// folder is the files of the folder workloads.
type folder struct {
	files   []string
	entries int
	bytes   int64
	// longest is the folder's longest line, in bytes without its
	// newline: what issue 17 bounds the import's memory by.
	longest int64
	note    string
}

// newFolder writes the folder's long sessions into dir and adds the
// corpus's store-import files.
func newFolder(seed uint64, c *corpus, long []folderSession, dir string) (*folder, error) {
	f := &folder{files: append([]string(nil), c.importFiles...), entries: c.importEntries, bytes: c.importBytes}
	var names []string
	for _, l := range long {
		ds, err := generate(seed, l.Shape, l.Size, dir)
		if err != nil {
			return nil, err
		}
		f.add(ds)
		names = append(names, fmt.Sprintf("%s-%s (%s)", l.Shape, sizeLabel(l.Size), fmtBytes(ds.FileBytes)))
	}
	var err error
	if f.longest, err = longestLine(f.files); err != nil {
		return nil, err
	}
	f.note = fmt.Sprintf("%d files: %d small (%s) and %s", len(f.files), len(c.importFiles), fmtBytes(c.importBytes), strings.Join(names, ", "))
	return f, nil
}

// add adds the session file of ds to the folder.
func (f *folder) add(ds *dataset) {
	f.files = append(f.files, ds.File)
	f.entries += len(ds.Entries)
	f.bytes += ds.FileBytes
}

// withLine returns the folder with one more session, written into dir,
// whose last line is size bytes long: the folder's longest line, when
// size is longer than its own.
func (f *folder) withLine(seed uint64, size int, dir string) (*folder, error) {
	ds, err := giantSession(seed, size, dir)
	if err != nil {
		return nil, err
	}
	g := &folder{files: slices.Clone(f.files), entries: f.entries, bytes: f.bytes}
	g.add(ds)
	g.note = fmt.Sprintf("%s, and a line of %s", f.note, fmtBytes(int64(size)))
	g.longest, err = longestLine(g.files)
	return g, err
}

// giantSession writes a short linear session into dir whose last entry is
// a user message with an inline image, making it one line of size bytes
// (within a few bytes): the folder's longest line, to show what a line's
// length costs the import.
func giantSession(seed uint64, size int, dir string) (*dataset, error) {
	ds, err := generate(seed^0x61a47, ShapeLinear, giantSessionEntries, dir)
	if err != nil {
		return nil, err
	}
	last, id := ds.Entries[len(ds.Entries)-1], fmt.Sprintf("%08x", uint32(seed)^0x9a9a9a9a)
	head := fmt.Sprintf(`{"type":"message","id":"%s","parentId":"%s","timestamp":"%s","message":{"role":"user","content":[{"type":"text","text":"what does this screenshot show?"},{"type":"image","data":"`,
		id, last.ID, last.Timestamp)
	const tail = `","mimeType":"image/png"}],"timestamp":1700000000000}}`
	n := max(4, size-len(head)-len(tail)) &^ 3
	f, err := os.OpenFile(ds.File, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString(head)
	block := giantBlock(seed)
	for left := n; left > 0; left -= min(left, len(block)) {
		w.WriteString(block[:min(left, len(block))])
	}
	w.WriteString(tail + "\n")
	err = errors.Join(w.Flush(), f.Close())
	ds.Entries = append(ds.Entries, sessiontree.Entry{ID: id})
	ds.FileBytes += int64(len(head) + n + len(tail) + 1)
	return ds, err
}

// giantSessionEntries is how many entries come before a giant line.
const giantSessionEntries = 20

// giantBlock is the base64 a giant image repeats: 1 MiB of it, from
// random bytes.
func giantBlock(seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 0x6a6a))
	raw := make([]byte, 3<<18)
	for i := range raw {
		raw[i] = byte(rng.Uint32())
	}
	return base64.StdEncoding.EncodeToString(raw)
}

// longestLine returns the length of the longest line of the files, in
// bytes without its newline.
func longestLine(files []string) (int64, error) {
	var longest int64
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			return 0, err
		}
		br := bufio.NewReaderSize(f, 1<<20)
		var n int64
		for {
			chunk, err := br.ReadSlice('\n')
			n += int64(len(chunk))
			if err == nil {
				longest, n = max(longest, n-1), 0
				continue
			}
			if err == bufio.ErrBufferFull {
				continue
			}
			longest = max(longest, n)
			if err != io.EOF {
				f.Close()
				return 0, err
			}
			break
		}
		f.Close()
	}
	return longest, nil
}

// prepareFolder generates the folder, when a folder workload runs.
func (r *runner) prepareFolder() (cleanup func(), err error) {
	if !r.opts.wantsWorkload("folder-import") && !r.opts.wantsWorkload("folder-index") || !r.opts.wants(backendStore) {
		return func() {}, nil
	}
	t0 := time.Now()
	dir := filepath.Join(r.dir, "folder")
	if r.folder, err = newFolder(r.opts.Seed, r.corpus, r.opts.FolderSessions, dir); err != nil {
		return nil, err
	}
	r.progress("generated a pi folder of %s, %d entries: %s (%v)", fmtBytes(r.folder.bytes), r.folder.entries, r.folder.note, time.Since(t0).Round(time.Millisecond))
	return func() {
		r.folder = nil
		if !r.opts.Keep {
			os.RemoveAll(dir)
		}
	}, nil
}

// importFolder imports the folder into s, checking every entry came.
func importFolder(ctx context.Context, s *store.Store, f *folder) error {
	rep, err := s.Import(ctx, f.files, store.ImportOptions{})
	if err == nil && rep.Entries != f.entries {
		err = fmt.Errorf("folder import: %d entries, want %d", rep.Entries, f.entries)
	}
	return err
}

// folderImportCases time store.Import of the whole folder into a fresh
// store, and reading its files.
func folderImportCases(r *runner, _ *dataset) []benchCase {
	f := r.folder
	if f == nil {
		f = &folder{} // not generated: no case runs
	}
	return []benchCase{
		{backend: backendStore, setup: func(ctx context.Context) (*prepared, error) {
			if len(f.files) == 0 {
				return nil, errUnsupported
			}
			fs := &freshStore{path: filepath.Join(r.dir, "store", "folder.db")}
			p := &prepared{maxIters: 1, rows: f.entries, bytes: f.bytes, before: fs.open, after: fs.close,
				note: f.note + "; store.Import, search index left pending (folder-index)"}
			p.op = func(ctx context.Context) error { return importFolder(ctx, fs.s, f) }
			return p, nil
		}},
		readFilesCase(f.files, f.entries, f.bytes, "read every file"),
	}
}

// folderIndexCases time the search index's catch-up after the folder's
// import, and on the floor, the same text inserted into a bare trigram
// FTS5 table in one transaction.
func folderIndexCases(r *runner, _ *dataset) []benchCase {
	f := r.folder
	if f == nil {
		f = &folder{} // not generated: no case runs
	}
	return []benchCase{{backend: backendStore, setup: func(ctx context.Context) (*prepared, error) {
		if len(f.files) == 0 {
			return nil, errUnsupported
		}
		fs := &freshStore{path: filepath.Join(r.dir, "store", "folder-index.db")}
		p := &prepared{maxIters: 1, rows: f.entries, bytes: f.bytes, after: fs.close,
			note: f.note + "; imported by store.Import, then store.Index"}
		p.before = func(ctx context.Context) error {
			if err := fs.open(ctx); err != nil {
				return err
			}
			return importFolder(ctx, fs.s, f)
		}
		p.op = func(ctx context.Context) error { return indexAll(ctx, fs.s, f.entries) }
		return p, nil
	}}, floorIndexCase(r, "folder-index.db", f.entries, f.bytes, f.searchBodies, "the folder's text into FTS5, one transaction")}
}

// searchBodies returns the text of every entry of the folder, as the
// store's index takes it (searchText).
func (f *folder) searchBodies() []string {
	var bodies []string
	for _, file := range f.files {
		for r, err := range jsonl.ReadFile(context.Background(), file, jsonl.ReadOptions{Mode: jsonl.Strict}) {
			if err == nil && r.Kind == jsonl.KindEntry {
				bodies = append(bodies, searchText(r.Entry))
			}
		}
	}
	return bodies
}

// folderTargets checks issue 17's import targets on the folder: the
// import alone at 60 MB/s or more, and until every entry is searchable
// (the import and the index's catch-up) at 30 MB/s or more.
func (rep *Report) folderTargets(add func(target, measured, v string)) {
	const alone, searchable = "store imports a realistic pi folder at ≥ 60 MB/s", "store imports a realistic pi folder and indexes it for search at ≥ 30 MB/s"
	sizes := rep.sizesOf("folder-import", string(ShapeCorpus))
	var imp, ix *Result
	if len(sizes) > 0 {
		n := sizes[len(sizes)-1]
		imp, ix = rep.find("folder-import", string(ShapeCorpus), n, backendStore), rep.find("folder-index", string(ShapeCorpus), n, backendStore)
	}
	if imp == nil {
		add(alone, "store not measured", verdictNotRun)
		add(searchable, "store not measured", verdictNotRun)
		return
	}
	mbs := float64(imp.Bytes) / 1e6 / (imp.MedianNs / 1e9)
	add(alone, fmt.Sprintf("%.1f MB/s (%s, %s)", mbs, fmtBytes(imp.Bytes), fmtDuration(imp.MedianNs)), verdict(mbs >= 60))
	if ix == nil {
		add(searchable, "folder-index not measured", verdictNotRun)
		return
	}
	both := float64(imp.Bytes) / 1e6 / ((imp.MedianNs + ix.MedianNs) / 1e9)
	add(searchable, fmt.Sprintf("%.1f MB/s (import %s + index %s)", both, fmtDuration(imp.MedianNs), fmtDuration(ix.MedianNs)), verdict(both >= 30))
}

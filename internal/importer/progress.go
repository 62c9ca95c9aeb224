package importer

import (
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/schollz/progressbar/v3"
)

// NewProgressBar is a progress bar on w (a terminal) for an import of the
// file at path, size bytes long: the share of the file read, the line and
// the observations per second; it clears itself when done.
func NewProgressBar(w io.Writer, path string, size int64) Progress {
	return &progressBar{
		name:  filepath.Base(path),
		start: time.Now(),
		bar: progressbar.NewOptions64(size,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription("importing "+filepath.Base(path)),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionClearOnFinish(),
		),
	}
}

type progressBar struct {
	name  string
	start time.Time
	first int // the line the import started after (a resume)
	seen  bool
	bar   *progressbar.ProgressBar
}

func (p *progressBar) Update(offset int64, line int) error {
	if !p.seen {
		p.first, p.seen = line, true
	}
	rate := float64(line-p.first) / max(time.Since(p.start).Seconds(), 1e-3)
	p.bar.Describe(fmt.Sprintf("importing %s: line %d, %.0f obs/s", p.name, line, rate))
	return p.bar.Set64(offset)
}

func (p *progressBar) Clear() error { return p.bar.Clear() }

package importer

import (
	"io"
	"path/filepath"
	"time"

	"github.com/schollz/progressbar/v3"
)

// NewProgressBar is a byte progress bar on w (a terminal) for an import
// of the file at path, size bytes long; it clears itself when done.
func NewProgressBar(w io.Writer, path string, size int64) Progress {
	return progressbar.NewOptions64(size,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("importing "+filepath.Base(path)),
		progressbar.OptionShowBytes(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionClearOnFinish(),
	)
}

package detectors

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"testing"

	"github.com/stretchr/testify/require"
)

// pngBase64 returns a real PNG (noise, so it does not compress), base64'd,
// of about n bytes.
func pngBase64(t testing.TB, n int) string {
	t.Helper()
	side := 8
	for {
		img := image.NewRGBA(image.Rect(0, 0, side, side))
		seed := uint32(1)
		for i := range img.Pix {
			seed = seed*1664525 + 1013904223
			img.Pix[i] = byte(seed >> 24)
		}
		img.Set(0, 0, color.RGBA{1, 2, 3, 255})
		var buf bytes.Buffer
		require.NoError(t, png.Encode(&buf, img))
		if s := base64.StdEncoding.EncodeToString(buf.Bytes()); len(s) >= n {
			return s
		}
		side *= 2
	}
}

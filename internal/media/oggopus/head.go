package oggopus

import "fmt"

// Channels is what the identification headers declare (RFC 7845, 5.1),
// added up over logical streams as the Meter adds their audio. Each is
// alone on its stream's first page, and first pages come first (RFC 3533, 4).
func Channels(b []byte) (int, error) {
	total := 0 // every header declares one channel at least
	for len(b) >= 27 && string(b[:4]) == "OggS" && b[4] == 0 && b[5]&0x02 != 0 {
		nseg := int(b[26])
		if nseg == 0 || len(b) < 27+nseg {
			return 0, fmt.Errorf("%w: a first page without its packet", ErrMalformed)
		}
		for i, l := range b[27 : 27+nseg] {
			// One whole packet: 255s, then one under 255.
			if (i < nseg-1) != (l == 255) {
				return 0, fmt.Errorf("%w: a first page that holds more or less than the identification header", ErrMalformed)
			}
		}
		size, _, head := pageAt(b)
		if size == 0 {
			return 0, fmt.Errorf("%w: a first page cut short", ErrMalformed)
		}
		// magic (8), version (1; 0–15), channels (1), pre-skip, rate, gain, family.
		if len(head) < 19 || string(head[:8]) != "OpusHead" || head[8]>>4 != 0 {
			return 0, fmt.Errorf("%w: a first page without an Opus identification header", ErrMalformed)
		}
		if head[9] == 0 {
			return 0, fmt.Errorf("%w: an identification header with no channels", ErrMalformed)
		}
		total += int(head[9])
		b = b[size:]
	}
	if total == 0 {
		return 0, fmt.Errorf("%w: no Ogg Opus first page at the start", ErrMalformed)
	}
	return total, nil
}

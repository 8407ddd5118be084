package oggopus

import "fmt"

// Channels is the number of channels an Ogg Opus stream's identification
// header declares (RFC 7845, section 5.1: the byte after "OpusHead" and
// its version). The header is the one whole packet of its logical stream's
// first page (section 3), and every logical stream's first page comes
// before any other page (RFC 3533, section 4), so only the first pages at
// the start of b are read. A stream that starts more than one logical
// stream has their channels added up, as the Meter adds up their audio.
func Channels(b []byte) (int, error) {
	total, streams := 0, 0
	for len(b) >= 27 && string(b[:4]) == "OggS" && b[4] == 0 && b[5]&0x02 != 0 {
		nseg := int(b[26])
		if nseg == 0 || len(b) < 27+nseg {
			return 0, fmt.Errorf("%w: a first page without its packet", ErrMalformed)
		}
		lacing := b[27 : 27+nseg]
		size := 27 + nseg
		for i, l := range lacing {
			// One packet, whole: 255s, then its last segment, under 255.
			if (i < nseg-1) != (l == 255) {
				return 0, fmt.Errorf("%w: a first page that holds more or less than the identification header", ErrMalformed)
			}
			size += int(l)
		}
		if len(b) < size {
			return 0, fmt.Errorf("%w: a first page cut short", ErrMalformed)
		}
		// OpusHead: magic (8), version (1; 0 to 15 are this format),
		// channel count (1), pre-skip (2), input rate (4), gain (2),
		// mapping family (1).
		head := b[27+nseg : size]
		if len(head) < 19 || string(head[:8]) != "OpusHead" || head[8]>>4 != 0 {
			return 0, fmt.Errorf("%w: a first page without an Opus identification header", ErrMalformed)
		}
		if head[9] == 0 {
			return 0, fmt.Errorf("%w: an identification header with no channels", ErrMalformed)
		}
		total += int(head[9])
		streams++
		b = b[size:]
	}
	if streams == 0 {
		return 0, fmt.Errorf("%w: no Ogg Opus first page at the start", ErrMalformed)
	}
	return total, nil
}

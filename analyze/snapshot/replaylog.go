package snapshot

import (
	"encoding/binary"
	"iter"
)

// replayLog is a device's replay log: every allocation (its key index) and
// every free of an allocation the trace made (^key), with its time. Its
// keys are read from its start (keys), its times at a few positions
// (timeAt).
//
// Entries are kept as varints, the key zigzagged and the time as its
// change from the entry before: about 3 bytes an entry on real traces
// (keys below 2^6, allocations microseconds apart) instead of 8, the
// largest memory a snapshot's analysis holds that grows with the trace.
// Keys and times are kept apart, so that the replays, which read only the
// keys, decode a byte an entry. Chunks of logChunk entries are kept at
// their length, so that a long trace neither doubles its memory nor copies
// it as it grows. The times start again from 0 every timeBlock entries,
// whose offsets are kept, so that timeAt decodes at most timeBlock of them.
type replayLog struct {
	keys  [][]byte // per full chunk, the entries' keys
	times [][]byte // per full chunk, the entries' time changes
	// curKeys and curTimes are the chunk being filled.
	curKeys, curTimes []byte
	// blockAt is where each timeBlock's times start in its chunk's.
	blockAt []uint16
	n       int
	t0      int64 // µs since the epoch of the first timed entry
	timed   bool
	prev    int64 // the time of the entry added last (0 at a block's start)
}

const (
	logChunk  = 1 << 12
	timeBlock = 1 << 8 // divides logChunk; a chunk's times fit in 64 KiB (10 bytes an entry at most)
)

func (l *replayLog) add(key int32, timeUs int64) {
	if l.n%timeBlock == 0 {
		if l.n%logChunk == 0 && l.n > 0 {
			// The chunk is full: keep it at its length.
			l.keys = append(l.keys, append([]byte(nil), l.curKeys...))
			l.times = append(l.times, append([]byte(nil), l.curTimes...))
			l.curKeys, l.curTimes = l.curKeys[:0], l.curTimes[:0]
		}
		if l.curKeys == nil {
			l.curKeys, l.curTimes = make([]byte, 0, logChunk), make([]byte, 0, 2*logChunk)
		}
		l.blockAt = append(l.blockAt, uint16(len(l.curTimes)))
		l.prev = 0
	}
	if timeUs != 0 && !l.timed {
		l.t0, l.timed = timeUs, true
	}
	l.curKeys = appendZigzag(l.curKeys, int64(key))
	l.curTimes = appendZigzag(l.curTimes, timeUs-l.prev)
	l.prev = timeUs
	l.n++
}

// chunk returns chunk c's keys and times (c <= len(l.keys)).
func (l *replayLog) chunk(c int) (keys, times []byte) {
	if c == len(l.keys) {
		return l.curKeys, l.curTimes
	}
	return l.keys[c], l.times[c]
}

// appendZigzag appends v as binary.AppendVarint does; a value of one byte
// takes no loop.
func appendZigzag(b []byte, v int64) []byte {
	u := uint64(v<<1) ^ uint64(v>>63)
	if u < 0x80 {
		return append(b, byte(u))
	}
	return binary.AppendUvarint(b, u)
}

// zigzagAt decodes the varint appendZigzag wrote at b[p:], and returns
// it and the position after it. b is the log's own: well formed.
func zigzagAt(b []byte, p int) (int64, int) {
	u := uint64(b[p])
	p++
	if u >= 0x80 {
		u &= 0x7f
		for s := uint(7); ; s += 7 {
			c := b[p]
			p++
			u |= uint64(c&0x7f) << s
			if c < 0x80 {
				break
			}
		}
	}
	return int64(u>>1) ^ -int64(u&1), p
}

// clock is the time of an entry whose raw time is raw: µs since the
// epoch, kept to float32's 7 digits after t0 (as the log kept it when its
// entries were 8 bytes), 0 untimed.
func (l *replayLog) clock(raw int64) int64 {
	if !l.timed {
		return 0
	}
	var dt float32
	if raw != 0 {
		dt = float32(raw - l.t0)
	}
	return l.t0 + int64(dt)
}

// keyIter reads a replay log's keys from its start, a chunk at a time: a
// chunk's varints are decoded in one loop, and next hands them out.
type keyIter struct {
	l    *replayLog
	c    int // the next chunk to decode
	j, n int // the next key of keys, and how many it holds
	keys [logChunk]int32
}

func (l *replayLog) keyIter() *keyIter { return &keyIter{l: l} }

// keyIterFrom reads the log's keys from entry i on (i <= l.n).
func (l *replayLog) keyIterFrom(i int) *keyIter {
	it := &keyIter{l: l, c: i / logChunk}
	if i%logChunk > 0 { // i's chunk has entries before it
		it.decode()
		it.j = i % logChunk
	}
	return it
}

// next returns the next entry's key; it must not be called past the log's
// end.
func (it *keyIter) next() int32 {
	if it.j == it.n {
		it.decode()
	}
	k := it.keys[it.j]
	it.j++
	return k
}

// nextKeys returns the keys of the entries up to the end of the current
// chunk (the next chunk's when it is read), nil at the log's end: a loop
// over them costs less than next for each.
func (it *keyIter) nextKeys() []int32 {
	if it.j == it.n {
		if it.c*logChunk >= it.l.n {
			return nil
		}
		it.decode()
	}
	ks := it.keys[it.j:it.n]
	it.j = it.n
	return ks
}

// keyRuns yields the keys of the log's entries from to upto (from <=
// upto <= the log's length) a run at a time, each with the position of
// its first entry: a caller's loop over a run's keys costs less than next
// for each, and the run, a chunk's at most, is reused for the next one.
func (l *replayLog) keyRuns(from, upto int) iter.Seq2[int, []int32] {
	return func(yield func(int, []int32) bool) {
		it := l.keyIterFrom(from)
		for i := from; i < upto; {
			ks := it.nextKeys()
			if len(ks) == 0 {
				return
			}
			ks = ks[:min(len(ks), upto-i)]
			if !yield(i, ks) {
				return
			}
			i += len(ks)
		}
	}
}

// decode decodes the next chunk's keys.
func (it *keyIter) decode() {
	b, _ := it.l.chunk(it.c)
	keys := it.keys[:min(logChunk, it.l.n-it.c*logChunk)]
	p := 0
	for e := range keys {
		var k int64
		k, p = zigzagAt(b, p)
		keys[e] = int32(k)
	}
	it.c++
	it.j, it.n = 0, len(keys)
}

// timeReader reads a replay log's times at ascending positions (timeAt),
// decoding each block of times it reads in once.
type timeReader struct {
	b    int // the block decoded into raws, -1 none
	raws [timeBlock]int64
}

func (l *replayLog) timeReader() *timeReader { return &timeReader{b: -1} }

// timeAt returns entry i's time in µs since the epoch (0 untimed), read
// with r: each block is decoded once for ascending positions.
func (l *replayLog) timeAt(r *timeReader, i int) int64 {
	if !l.timed {
		return 0
	}
	if b := i / timeBlock; r.b != b {
		_, times := l.chunk(i / logChunk)
		p := int(l.blockAt[b])
		var prev int64
		for e := range min(timeBlock, l.n-b*timeBlock) {
			var d int64
			d, p = zigzagAt(times, p)
			prev += d
			r.raws[e] = prev
		}
		r.b = b
	}
	return l.clock(r.raws[i%timeBlock])
}

package iohandle

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the size of a transparent huge page on the platforms Linux
// runs ometiff on (x86-64, and arm64 with 4 KiB base pages).
const hugePage = 2 << 20

// mapBuffer returns an empty buffer of capacity size from outside the Go
// heap when size is a multiple of hugePage: an anonymous mapping aligned to
// hugePage and advised for transparent huge pages, so that the kernel
// backs it with a few huge pages instead of faulting in one 4 KiB page at a
// time. That first touch is most of what a fresh buffer costs, and each
// fault is dear on virtual machines that shadow the guest's page tables
// (BenchmarkFirstTouch measures both ways). Otherwise, or if the system
// refuses, it returns nil and the caller allocates on the heap. A buffer
// from mapBuffer goes back to unmapBuffer exactly once and is not used
// after that.
func mapBuffer(size int) []byte {
	if size <= 0 || size%hugePage != 0 {
		return nil
	}
	// Map one huge page more than needed and unmap the unaligned ends.
	length := uintptr(size + hugePage)
	p, err := unix.MmapPtr(-1, 0, nil, length, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil
	}
	head := -uintptr(p) & (hugePage - 1)
	buf := unsafe.Slice((*byte)(unsafe.Add(p, head)), size)
	tail := unsafe.Add(p, head+uintptr(size))
	if err := unmap(tail, length-head-uintptr(size)); err != nil {
		_ = unix.MunmapPtr(p, length)
		return nil
	}
	if err := unmap(p, head); err != nil {
		_ = unix.MunmapPtr(p, head+uintptr(size))
		return nil
	}
	_ = unix.Madvise(buf, unix.MADV_HUGEPAGE) // a hint: small pages work too
	return buf[:0]
}

// unmap unmaps n bytes at p, if any.
func unmap(p unsafe.Pointer, n uintptr) error {
	if n == 0 {
		return nil
	}
	return unix.MunmapPtr(p, n)
}

// unmapBuffer releases a buffer from mapBuffer.
func unmapBuffer(buf []byte) {
	_ = unix.MunmapPtr(unsafe.Pointer(unsafe.SliceData(buf)), uintptr(cap(buf)))
}

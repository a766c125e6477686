//go:build !unix

package daily

import "io/fs"

// fileID names a directory by its absolute path with links resolved (no
// inode on this OS), so that a directory reached by two paths is walked
// once.
func fileID(path string, _ fs.FileInfo) any { return realPath(path) }

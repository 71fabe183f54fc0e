package reliability_test

import "syscall"

// mountTmpfs mounts a small tmpfs on dir (root only).
func mountTmpfs(dir string) error {
	return syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64m,mode=0755")
}

// remountReadOnly makes the tmpfs on dir read-only.
func remountReadOnly(dir string) error {
	return syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_REMOUNT|syscall.MS_RDONLY, "")
}

// unmount unmounts dir.
func unmount(dir string) { _ = syscall.Unmount(dir, 0) }

// bindReadOnly mounts dir src again on dst, read-only (root only).
func bindReadOnly(src, dst string) error {
	if err := syscall.Mount(src, dst, "", syscall.MS_BIND, ""); err != nil {
		return err
	}
	return syscall.Mount(src, dst, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, "")
}

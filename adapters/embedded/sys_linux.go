package embedded

import "syscall"

// mapPopulate reads the mapped file in at once rather than page by page.
const mapPopulate = syscall.MAP_POPULATE

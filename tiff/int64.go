package tiff

import "math"

// int64Only stops a build for a platform whose int is 32 bits: this
// module's image sizes, block sizes and file offsets are ints, and
// 2^31 bytes is a small slide, so such a build would truncate them. On
// such a platform the constant is -1, which a uint cannot hold, and the
// compiler says so here.
const int64Only uint = math.MaxInt>>32 - 1

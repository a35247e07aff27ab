// ops::<name>: one typed entry point per kernel, grouped by area in ops_<area>.h. These are the
// only code that knows a kernel's binding order, push struct, specialization constants and grid.
// Shapes are given in comments, outermost first, f32 unless said.
#pragma once
#include "ops_attention.h"
#include "ops_copy.h"
#include "ops_elementwise.h"
#include "ops_linear.h"
#include "ops_matmul.h"
#include "ops_matmul_coop.h"
#include "ops_moe.h"
#include "ops_position.h"

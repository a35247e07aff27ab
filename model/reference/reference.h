// The CPU reference: every op written from the math, and (later) a whole-model forward.
#pragma once
#include "elementwise.h"
#include "position.h"
#include "matmul.h"
#include "quant.h"
#include "attention.h"

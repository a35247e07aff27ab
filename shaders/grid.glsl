// Indices over the dispatch grid. Streams spread more than 65535 workgroups over a 2-D grid
// (runtime/stream.h, Groups), so a kernel's workgroup number is y · width + x.
#ifndef VKLLM_GRID_GLSL
#define VKLLM_GRID_GLSL

uint group_index() { return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; }

// This invocation's number over the whole grid, for workgroups of wg threads.
uint thread_index(uint wg) { return group_index() * wg + gl_LocalInvocationIndex; }

#endif

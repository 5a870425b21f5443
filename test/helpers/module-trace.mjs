// Given to node with --import: every module node loads as an ES module (the package's own files,
// and each dependency's entry) is appended, as a file URL a line, to the file LQB_MODULE_TRACE names.
import { register } from 'node:module';

register(new URL('./module-trace-hooks.mjs', import.meta.url), { data: { file: process.env.LQB_MODULE_TRACE } });

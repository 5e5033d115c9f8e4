// See esm-require-transformer.cjs: the ESM-only NestJS modules that CommonJS packages require.
import * as common from '@nestjs/common';
import * as core from '@nestjs/core';

(globalThis as Record<string, unknown>).__esmInterop = { '@nestjs/common': common, '@nestjs/core': core };

// Jest transformer for CommonJS packages that require() the ESM-only NestJS 12 packages
// (@nestjs/throttler 6). Node 20 loads them through require(esm), but Jest's sandbox cannot
// before Node 24.9. The ESM modules are imported once by test/setup/esm-interop.ts and handed to
// these packages through globalThis, so both sides share the same module instances (same
// Reflector, same decorators). Test infrastructure only: the application runs the package as is.
const ESM_ONLY = ['@nestjs/common', '@nestjs/core'];

module.exports = {
  process(source) {
    let code = source;
    for (const name of ESM_ONLY) {
      code = code.split(`require("${name}")`).join(`globalThis.__esmInterop[${JSON.stringify(name)}]`);
    }
    return { code };
  },
  getCacheKey(source, path) {
    return require('node:crypto').createHash('sha256').update('esm-interop-1').update(path).update(source).digest('hex');
  },
};

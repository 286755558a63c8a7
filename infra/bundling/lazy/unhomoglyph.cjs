// Stand-in for `unhomoglyph` in Lambda bundles (infra/bundling LAZY_ALIASES): the package builds a
// regular expression from its 115 KB confusables table when evaluated; this defers that to the first call.
let unhomoglyph;
module.exports = (text) => {
  unhomoglyph ??= require('../../../node_modules/unhomoglyph/index.js');
  return unhomoglyph(text);
};

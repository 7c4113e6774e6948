// What a user writes: the built plugin through the package's "./eslint" export.
import pgq from 'pgq-audit/eslint';

export default [...pgq.configs.recommended];

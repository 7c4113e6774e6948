// Moved to src/model/lines.ts (the model's own positions); kept here for the engine's importers.
export * from '../model/lines.ts';

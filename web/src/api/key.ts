/**
 * The API key the browser sends (docs/web.md "Sign-in"): kept in localStorage under `atlas.apiKey` when the user asks
 * to be remembered, else in sessionStorage (gone with the tab). Nothing is stored on the open loopback default.
 */
const NAME = 'atlas.apiKey';

/** The stored key, or null. */
export const readKey = (): string | null => sessionStorage.getItem(NAME) ?? localStorage.getItem(NAME);

/** Stores `key` (remember: localStorage, else sessionStorage), replacing any other. */
export const storeKey = (key: string, remember: boolean): void => {
  clearKey();
  (remember ? localStorage : sessionStorage).setItem(NAME, key);
};

/** Forgets the key (sign out). */
export const clearKey = (): void => {
  sessionStorage.removeItem(NAME);
  localStorage.removeItem(NAME);
};

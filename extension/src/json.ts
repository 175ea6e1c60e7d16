// The JSON values that cross the native messaging host and chrome.* calls.

export type Json = null | boolean | number | string | Json[] | {
  [key: string]: Json;
};

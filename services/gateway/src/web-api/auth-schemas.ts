// Moved to the contracts (decision 119), where the web's typed API client reads them too.
export * from '@bindery/contracts/api/auth';

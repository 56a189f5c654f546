/** A stylesheet imported by a bundle comes as text (scripts/build-web.js loads .css files so). */
declare module '*.css' {
  const text: string;
  export default text;
}
